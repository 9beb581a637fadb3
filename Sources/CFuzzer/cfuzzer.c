#include "cfuzzer.h"

// Weak: resolved only when libFuzzer's runtime is linked and its driver pulled in
// (fuzz/run passes `--undefined=LLVMFuzzerRunDriver`); a plain build leaves it null.
extern int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *, size_t))
    __attribute__((weak));

static cfuzzer_callback current;

// libFuzzer's runtime refers to this name; it forwards to the target being fuzzed.
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return current ? current(data, size) : 0; }

int cfuzzer_run(int *argc, char ***argv, cfuzzer_callback callback) {
    if (!LLVMFuzzerRunDriver) return -1;
    current = callback;
    return LLVMFuzzerRunDriver(argc, argv, callback);
}
