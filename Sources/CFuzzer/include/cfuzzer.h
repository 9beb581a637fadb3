// libFuzzer's driver, when the fuzzer's runtime is linked in (a `-sanitize=fuzzer` build,
// see fuzz/run); otherwise the same binary replays inputs from files.
#include <stddef.h>
#include <stdint.h>

typedef int (*cfuzzer_callback)(const uint8_t *data, size_t size);

/// Runs libFuzzer on `callback` with the process's arguments and returns its status, or
/// returns -1 at once when the binary was built without libFuzzer.
int cfuzzer_run(int *argc, char ***argv, cfuzzer_callback callback);
