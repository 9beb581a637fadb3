#include "ccrypto.h"
#include "cloader.h"
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <pthread.h>
#include <stdio.h>

// The calls made, resolved by name from libcrypto.so.3 the first time one is needed.
static struct {
    EVP_CIPHER_CTX *(*ctx_new)(void);
    void (*ctx_free)(EVP_CIPHER_CTX *);
    const EVP_CIPHER *(*aes_128_ecb)(void);
    int (*encrypt_init)(EVP_CIPHER_CTX *, const EVP_CIPHER *, ENGINE *, const unsigned char *, const unsigned char *);
    int (*set_padding)(EVP_CIPHER_CTX *, int);
    int (*encrypt_update)(EVP_CIPHER_CTX *, unsigned char *, int *, const unsigned char *, int);
    const EVP_MD *(*sha256)(void);
    unsigned char *(*hmac)(const EVP_MD *, const void *, int, const unsigned char *, size_t, unsigned char *,
                           unsigned int *);
    // For ESPHome's Noise handshake and transport: SHA-256, X25519, ChaCha20-Poly1305.
    int (*digest)(const void *, size_t, unsigned char *, unsigned int *, const EVP_MD *, ENGINE *);
    EVP_PKEY *(*pkey_new_private)(int, ENGINE *, const unsigned char *, size_t);
    EVP_PKEY *(*pkey_new_public)(int, ENGINE *, const unsigned char *, size_t);
    int (*pkey_get_public)(const EVP_PKEY *, unsigned char *, size_t *);
    void (*pkey_free)(EVP_PKEY *);
    EVP_PKEY_CTX *(*pkey_ctx_new)(EVP_PKEY *, ENGINE *);
    void (*pkey_ctx_free)(EVP_PKEY_CTX *);
    int (*derive_init)(EVP_PKEY_CTX *);
    int (*derive_set_peer)(EVP_PKEY_CTX *, EVP_PKEY *);
    int (*derive)(EVP_PKEY_CTX *, unsigned char *, size_t *);
    const EVP_CIPHER *(*chacha20_poly1305)(void);
    int (*cipher_init)(EVP_CIPHER_CTX *, const EVP_CIPHER *, ENGINE *, const unsigned char *, const unsigned char *,
                       int);
    int (*cipher_update)(EVP_CIPHER_CTX *, unsigned char *, int *, const unsigned char *, int);
    int (*cipher_final)(EVP_CIPHER_CTX *, unsigned char *, int *);
    int (*cipher_ctrl)(EVP_CIPHER_CTX *, int, int, void *);
} crypto;
static char load_error[256];

#define SYMBOL(field, name) {name, (void **)&crypto.field}
static const beacond_symbol symbols[] = {
    SYMBOL(ctx_new, "EVP_CIPHER_CTX_new"),
    SYMBOL(ctx_free, "EVP_CIPHER_CTX_free"),
    SYMBOL(aes_128_ecb, "EVP_aes_128_ecb"),
    SYMBOL(encrypt_init, "EVP_EncryptInit_ex"),
    SYMBOL(set_padding, "EVP_CIPHER_CTX_set_padding"),
    SYMBOL(encrypt_update, "EVP_EncryptUpdate"),
    SYMBOL(sha256, "EVP_sha256"),
    SYMBOL(hmac, "HMAC"),
    SYMBOL(digest, "EVP_Digest"),
    SYMBOL(pkey_new_private, "EVP_PKEY_new_raw_private_key"),
    SYMBOL(pkey_new_public, "EVP_PKEY_new_raw_public_key"),
    SYMBOL(pkey_get_public, "EVP_PKEY_get_raw_public_key"),
    SYMBOL(pkey_free, "EVP_PKEY_free"),
    SYMBOL(pkey_ctx_new, "EVP_PKEY_CTX_new"),
    SYMBOL(pkey_ctx_free, "EVP_PKEY_CTX_free"),
    SYMBOL(derive_init, "EVP_PKEY_derive_init"),
    SYMBOL(derive_set_peer, "EVP_PKEY_derive_set_peer"),
    SYMBOL(derive, "EVP_PKEY_derive"),
    SYMBOL(chacha20_poly1305, "EVP_chacha20_poly1305"),
    SYMBOL(cipher_init, "EVP_CipherInit_ex"),
    SYMBOL(cipher_update, "EVP_CipherUpdate"),
    SYMBOL(cipher_final, "EVP_CipherFinal_ex"),
    SYMBOL(cipher_ctrl, "EVP_CIPHER_CTX_ctrl"),
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static void load(void) {
    loaded = beacond_load_library("libcrypto.so.3", symbols, sizeof symbols / sizeof *symbols, load_error,
                                  sizeof load_error) != NULL;
}

const char *beacond_crypto_unavailable_reason(void) {
    pthread_once(&once, load);
    return loaded ? NULL : load_error;
}

beacond_aes128 *beacond_aes128_new(const unsigned char *key) {
    if (beacond_crypto_unavailable_reason()) return NULL;
    EVP_CIPHER_CTX *ctx = crypto.ctx_new();
    if (!ctx) return NULL;
    if (crypto.encrypt_init(ctx, crypto.aes_128_ecb(), NULL, key, NULL) != 1 || crypto.set_padding(ctx, 0) != 1) {
        crypto.ctx_free(ctx);
        return NULL;
    }
    return (beacond_aes128 *)ctx;
}

void beacond_aes128_free(beacond_aes128 *cipher) {
    if (cipher) crypto.ctx_free((EVP_CIPHER_CTX *)cipher);
}

int beacond_aes128_encrypt(beacond_aes128 *cipher, const unsigned char *in, unsigned char *out, int blocks) {
    int length = 0;
    return crypto.encrypt_update((EVP_CIPHER_CTX *)cipher, out, &length, in, 16 * blocks) == 1 && length == 16 * blocks;
}

int beacond_resolve_rpa(beacond_aes128 *const *ciphers, int count, unsigned prand, unsigned hash) {
    unsigned char in[16] = {0};
    unsigned char out[16];
    in[13] = (unsigned char)(prand >> 16);
    in[14] = (unsigned char)(prand >> 8);
    in[15] = (unsigned char)prand;
    for (int i = 0; i < count; i++) {
        if (!beacond_aes128_encrypt(ciphers[i], in, out, 1)) continue;
        unsigned h = (unsigned)out[13] << 16 | (unsigned)out[14] << 8 | (unsigned)out[15];
        if (h == hash) return i;
    }
    return -1;
}

void beacond_resolve_rpas(beacond_aes128 *const *ciphers, int count, const unsigned char *blocks,
                          const unsigned *hashes, int n, int *found, unsigned char *scratch) {
    int left = n;
    for (int i = 0; i < count && left > 0; i++) {
        if (!beacond_aes128_encrypt(ciphers[i], blocks, scratch, n)) continue;
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

int beacond_hmac_sha256(const unsigned char *key, size_t key_length, const unsigned char *message,
                        size_t message_length, unsigned char *out) {
    if (beacond_crypto_unavailable_reason()) return 0;
    static const unsigned char empty = 0;
    unsigned int length = 0;
    return crypto.hmac(crypto.sha256(), key_length ? (const void *)key : &empty, (int)key_length,
                       message_length ? message : &empty, message_length, out, &length) != NULL &&
           length == 32;
}

int beacond_sha256(const unsigned char *message, size_t length, unsigned char *out) {
    if (beacond_crypto_unavailable_reason()) return 0;
    static const unsigned char empty = 0;
    unsigned int written = 0;
    return crypto.digest(length ? message : &empty, length, out, &written, crypto.sha256(), NULL) == 1 &&
           written == 32;
}

int beacond_x25519_public(const unsigned char *private_key, unsigned char *public_key) {
    if (beacond_crypto_unavailable_reason()) return 0;
    EVP_PKEY *key = crypto.pkey_new_private(EVP_PKEY_X25519, NULL, private_key, 32);
    if (!key) return 0;
    size_t length = 32;
    int ok = crypto.pkey_get_public(key, public_key, &length) == 1 && length == 32;
    crypto.pkey_free(key);
    return ok;
}

int beacond_x25519(const unsigned char *private_key, const unsigned char *peer_public, unsigned char *shared) {
    if (beacond_crypto_unavailable_reason()) return 0;
    EVP_PKEY *key = crypto.pkey_new_private(EVP_PKEY_X25519, NULL, private_key, 32);
    EVP_PKEY *peer = crypto.pkey_new_public(EVP_PKEY_X25519, NULL, peer_public, 32);
    EVP_PKEY_CTX *ctx = key ? crypto.pkey_ctx_new(key, NULL) : NULL;
    size_t length = 32;
    int ok = ctx && peer && crypto.derive_init(ctx) == 1 && crypto.derive_set_peer(ctx, peer) == 1 &&
             crypto.derive(ctx, shared, &length) == 1 && length == 32;
    if (ctx) crypto.pkey_ctx_free(ctx);
    if (peer) crypto.pkey_free(peer);
    if (key) crypto.pkey_free(key);
    return ok;
}

int beacond_chachapoly(int encrypt, const unsigned char *key, const unsigned char *nonce, const unsigned char *ad,
                       size_t ad_length, const unsigned char *in, size_t length, unsigned char *out) {
    if (beacond_crypto_unavailable_reason()) return 0;
    EVP_CIPHER_CTX *ctx = crypto.ctx_new();
    if (!ctx) return 0;
    int n = 0, ok = crypto.cipher_init(ctx, crypto.chacha20_poly1305(), NULL, key, nonce, encrypt) == 1;
    if (ok && ad_length) ok = crypto.cipher_update(ctx, NULL, &n, ad, (int)ad_length) == 1;
    if (ok && !encrypt) ok = crypto.cipher_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, (void *)(in + length)) == 1;
    if (ok && length) ok = crypto.cipher_update(ctx, out, &n, in, (int)length) == 1 && (size_t)n == length;
    if (ok) ok = crypto.cipher_final(ctx, out + length, &n) == 1;
    if (ok && encrypt) ok = crypto.cipher_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, out + length) == 1;
    crypto.ctx_free(ctx);
    return ok;
}
