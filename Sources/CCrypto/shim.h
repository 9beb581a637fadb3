#ifndef BEACOND_CCRYPTO_SHIM_H
#define BEACOND_CCRYPTO_SHIM_H

#include <openssl/evp.h>
#include <openssl/hmac.h>

/* The index of the first of `count` AES-128-ECB contexts (identity resolving keys) whose
 * ah(k, prand) is `hash` (Bluetooth Core specification, Vol 3, Part H, 2.2.2), or -1.
 * A loop in C: from Swift, each call through the contexts cost 50 times the cipher. */
static inline int beacond_resolve_rpa(EVP_CIPHER_CTX *const *contexts, int count, unsigned prand, unsigned hash) {
    unsigned char in[16] = {0};
    unsigned char out[32];
    int length = 0;
    in[13] = (unsigned char)(prand >> 16);
    in[14] = (unsigned char)(prand >> 8);
    in[15] = (unsigned char)prand;
    for (int i = 0; i < count; i++) {
        if (EVP_EncryptUpdate(contexts[i], out, &length, in, 16) != 1 || length != 16) continue;
        unsigned h = (unsigned)out[13] << 16 | (unsigned)out[14] << 8 | (unsigned)out[15];
        if (h == hash) return i;
    }
    return -1;
}

/* Resolves `n` addresses at once: `blocks` holds each one's ah input (n × 16 bytes), `hashes`
 * their hashes, `scratch` room for n × 16 + 16 bytes; `found[j]` (set to -1 by the caller) gets
 * the first context whose hash is address j's. One pass of ECB per key over all the blocks:
 * each key's schedule is read from memory once for the batch, not once per address, and
 * libcrypto pipelines the blocks (1.5 ns a block against 13 for one block at a time). */
static inline void beacond_resolve_rpas(EVP_CIPHER_CTX *const *contexts, int count, const unsigned char *blocks,
                                        const unsigned *hashes, int n, int *found, unsigned char *scratch) {
    int left = n;
    for (int i = 0; i < count && left > 0; i++) {
        int length = 0;
        if (EVP_EncryptUpdate(contexts[i], scratch, &length, blocks, 16 * n) != 1 || length != 16 * n) continue;
        for (int j = 0; j < n; j++) {
            if (found[j] >= 0) continue;
            const unsigned char *out = scratch + 16 * j;
            unsigned h = (unsigned)out[13] << 16 | (unsigned)out[14] << 8 | (unsigned)out[15];
            if (h == hashes[j]) {
                found[j] = i;
                left -= 1;
            }
        }
    }
}

#endif
