// An SD card's fsync, on a fast disk: LD_PRELOAD this and every fsync and fdatasync takes
// SLOWSYNC_MS milliseconds more (default 20) before it syncs. For measuring what a slow card
// does to beacond's alerts (BENCHMARKS.md, "Publishing on a slow card"); not shipped.
//   cc -shared -fPIC -O2 -o /tmp/slowsync.so bench/slowsync.c -ldl
//   LD_PRELOAD=/tmp/slowsync.so SLOWSYNC_MS=50 Benchmarks/.build/release/beacond-publish-bench 20000 300
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void delay(void) {
    const char *ms = getenv("SLOWSYNC_MS");
    long n = ms ? atol(ms) : 20;
    struct timespec t = {n / 1000, (n % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    delay();
    return real(fd);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    delay();
    return real(fd);
}
