// A narrow C face for the system's libcrypto (OpenSSL 3; Debian: libssl3, libssl-dev to
// build): AES-128 on blocks for resolving phones' private addresses, HMAC-SHA256 for webhook
// signatures, SHA-256, X25519 and ChaCha20-Poly1305 for ESPHome's Noise encryption. Loaded with dlopen at first use, as libcurl is: a gateway with no phone among
// its assets and no webhook never maps it.
#include <stddef.h>

/// Why libcrypto cannot be used (it could not be loaded), or NULL. Loads it on first use.
const char *beacond_crypto_unavailable_reason(void);

typedef struct beacond_aes128 beacond_aes128;

/// AES-128-ECB encryption under `key` (16 bytes), its schedule made once; NULL when libcrypto
/// is unavailable or refuses the key.
beacond_aes128 *beacond_aes128_new(const unsigned char *key);
void beacond_aes128_free(beacond_aes128 *cipher);

/// Encrypts `blocks` 16-byte blocks of `in` into `out`; 1 on success.
int beacond_aes128_encrypt(beacond_aes128 *cipher, const unsigned char *in, unsigned char *out, int blocks);

/// The index of the first of `count` ciphers (identity resolving keys) whose ah(k, prand) is
/// `hash` (Bluetooth Core specification, Vol 3, Part H, 2.2.2), or -1. A loop in C: from
/// Swift, each call through the ciphers cost 50 times the cipher.
int beacond_resolve_rpa(beacond_aes128 *const *ciphers, int count, unsigned prand, unsigned hash);

/// Resolves `n` addresses at once: `blocks` holds each one's ah input (n × 16 bytes), `hashes`
/// their hashes, `scratch` room for n × 16 bytes; `found[j]` (set to -1 by the caller) gets the
/// first cipher whose hash is address j's. One ECB pass per key over all the blocks: each key's
/// schedule is read from memory once for the batch, not once per address, and libcrypto
/// pipelines the blocks (1.5 ns a block against 13 for one block at a time).
void beacond_resolve_rpas(beacond_aes128 *const *ciphers, int count, const unsigned char *blocks,
                          const unsigned *hashes, int n, int *found, unsigned char *scratch);

/// HMAC-SHA256 of `message` under `key` into `out` (32 bytes); 1 on success.
int beacond_hmac_sha256(const unsigned char *key, size_t key_length, const unsigned char *message,
                        size_t message_length, unsigned char *out);

/// SHA-256 of `message` into `out` (32 bytes); 1 on success.
int beacond_sha256(const unsigned char *message, size_t length, unsigned char *out);

/// The X25519 public key of `private_key` (32 bytes each); 1 on success.
int beacond_x25519_public(const unsigned char *private_key, unsigned char *public_key);

/// X25519(`private_key`, `peer_public`) into `shared` (32 bytes each); 0 on failure, including
/// a peer key that gives the all-zero secret.
int beacond_x25519(const unsigned char *private_key, const unsigned char *peer_public, unsigned char *shared);

/// ChaCha20-Poly1305 (RFC 8439) under `key` (32 bytes) and `nonce` (12): encrypting, `length`
/// bytes of `in` into `out` followed by the 16-byte tag; decrypting, `in` is `length` bytes then
/// the tag, and `out` gets the `length` plain bytes (and 16 of scratch). 1 on success; 0 when
/// the tag does not verify.
int beacond_chachapoly(int encrypt, const unsigned char *key, const unsigned char *nonce, const unsigned char *ad,
                       size_t ad_length, const unsigned char *in, size_t length, unsigned char *out);
