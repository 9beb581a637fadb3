#include "cloader.h"
#include <dlfcn.h>
#include <stdio.h>

void *beacond_load_library(const char *file, const beacond_symbol *symbols, size_t count, char *error,
                           size_t error_size) {
    void *library = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(error, error_size, "cannot load %s: %s", file, dlerror());
        return NULL;
    }
    for (size_t i = 0; i < count; i++) {
        if (!(*symbols[i].slot = dlsym(library, symbols[i].name))) {
            snprintf(error, error_size, "%s has no %s", file, symbols[i].name);
            /* A library missing one function is not used at all: no slot keeps a pointer into
               it, and it is unloaded rather than left mapped for nothing. */
            for (size_t j = 0; j < i; j++) *symbols[j].slot = NULL;
            dlclose(library);
            return NULL;
        }
    }
    return library;
}
