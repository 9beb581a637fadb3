#ifndef BEACOND_CLOADER_H
#define BEACOND_CLOADER_H

#include <stddef.h>

// A library the daemon loads at first use (libcurl, libcrypto, libmosquitto), so that a
// gateway that never needs it never maps it: each function it calls is named here with the
// place its address goes.
typedef struct {
    const char *name;
    void **slot;
} beacond_symbol;

// Opens `file` and resolves every symbol into its slot. Returns the library's handle, or NULL
// with why (the file that would not load, or the function it lacks) written into `error`.
void *beacond_load_library(const char *file, const beacond_symbol *symbols, size_t count, char *error,
                           size_t error_size);

#endif
