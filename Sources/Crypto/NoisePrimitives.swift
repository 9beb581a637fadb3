import CCrypto

/// SHA-256, X25519 and ChaCha20-Poly1305 from the system's libcrypto: the functions of the
/// Noise protocol ESPHome encrypts its native API with (`Noise_NNpsk0_25519_ChaChaPoly_SHA256`).
///
/// Why libcrypto: the same maintained, constant-time code every Debian gateway has (libcurl
/// uses it), loaded at first use; no cipher of our own. Each returns nil only when libcrypto
/// cannot be loaded (`AES128.unavailableReason`) or refuses the input.
public enum NoisePrimitives {
    public static func sha256(_ message: [UInt8]) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: 32)
        let ok = message.withUnsafeBufferPointer { m in
            out.withUnsafeMutableBufferPointer { beacond_sha256(m.baseAddress, m.count, $0.baseAddress) }
        }
        return ok == 1 ? out : nil
    }

    public static func hmacSHA256(key: [UInt8], _ message: [UInt8]) -> [UInt8]? {
        HMACSHA256.mac(key: key, message: message)
    }

    /// The public key of an X25519 private key (32 bytes each).
    public static func x25519Public(_ privateKey: [UInt8]) -> [UInt8]? {
        guard privateKey.count == 32 else { return nil }
        var out = [UInt8](repeating: 0, count: 32)
        let ok = privateKey.withUnsafeBufferPointer { k in
            out.withUnsafeMutableBufferPointer { beacond_x25519_public(k.baseAddress, $0.baseAddress) }
        }
        return ok == 1 ? out : nil
    }

    /// The shared secret of a private key and a peer's public key; nil for a peer key that
    /// gives the all-zero secret.
    public static func x25519(_ privateKey: [UInt8], _ peerPublic: [UInt8]) -> [UInt8]? {
        guard privateKey.count == 32, peerPublic.count == 32 else { return nil }
        var out = [UInt8](repeating: 0, count: 32)
        let ok = privateKey.withUnsafeBufferPointer { k in
            peerPublic.withUnsafeBufferPointer { p in
                out.withUnsafeMutableBufferPointer { beacond_x25519(k.baseAddress, p.baseAddress, $0.baseAddress) }
            }
        }
        return ok == 1 ? out : nil
    }

    /// `plain` encrypted, its 16-byte tag after it.
    public static func seal(key: [UInt8], nonce: [UInt8], ad: [UInt8], _ plain: [UInt8]) -> [UInt8]? {
        chachapoly(encrypt: true, key: key, nonce: nonce, ad: ad, plain, length: plain.count)
    }

    /// The plain bytes of `sealed` (ciphertext then tag); nil when the tag does not verify.
    public static func open(key: [UInt8], nonce: [UInt8], ad: [UInt8], _ sealed: [UInt8]) -> [UInt8]? {
        guard sealed.count >= 16 else { return nil }
        return chachapoly(encrypt: false, key: key, nonce: nonce, ad: ad, sealed, length: sealed.count - 16)
            .map { Array($0.prefix(sealed.count - 16)) }
    }

    private static func chachapoly(
        encrypt: Bool, key: [UInt8], nonce: [UInt8], ad: [UInt8], _ input: [UInt8], length: Int
    )
        -> [UInt8]?
    {
        guard key.count == 32, nonce.count == 12 else { return nil }
        var out = [UInt8](repeating: 0, count: length + 16)
        let ok = key.withUnsafeBufferPointer { k in
            nonce.withUnsafeBufferPointer { n in
                ad.withUnsafeBufferPointer { a in
                    input.withUnsafeBufferPointer { i in
                        out.withUnsafeMutableBufferPointer {
                            beacond_chachapoly(
                                encrypt ? 1 : 0, k.baseAddress, n.baseAddress, a.baseAddress, a.count, i.baseAddress,
                                length, $0.baseAddress)
                        }
                    }
                }
            }
        }
        return ok == 1 ? out : nil
    }
}
