import Crypto

/// The initiator's side of `Noise_NNpsk0_25519_ChaChaPoly_SHA256` (the Noise Protocol
/// Framework, revision 34), as ESPHome's native API uses it: prologue `NoiseAPIInit\0\0`, the
/// pre-shared key the proxy's `api: encryption: key:`, no static keys.
///
/// Why written out here: the handshake is two messages and a few hashes; the cryptography
/// itself (X25519, ChaCha20-Poly1305, SHA-256, HMAC) is libcrypto's (`NoisePrimitives`).
/// Checked against the `noise` library aioesphomeapi uses, on a transcript with fixed keys.
public struct NoiseHandshake: Sendable {
    static let protocolName = Array("Noise_NNpsk0_25519_ChaChaPoly_SHA256".utf8)
    static let prologue = Array("NoiseAPIInit".utf8) + [0, 0]

    private var ck: [UInt8]
    private var h: [UInt8]
    private var k: [UInt8]?
    private var n: UInt64 = 0
    private let ephemeral: [UInt8]

    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// `ephemeral`: the handshake's private key, 32 random bytes (given by tests for a fixed
    /// transcript).
    public init(psk: [UInt8], ephemeral: [UInt8]? = nil) throws(Failure) {
        guard psk.count == 32 else { throw Failure(description: "the key is \(psk.count) bytes, not 32") }
        var random = SystemRandomNumberGenerator()
        self.ephemeral = ephemeral ?? (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) }
        // The name is longer than a hash: h is its hash.
        guard let named = NoisePrimitives.sha256(Self.protocolName) else { throw Self.unavailable }
        (ck, h) = (named, named)
        try mixHash(Self.prologue)
        // NNpsk0: the key is mixed in before the first message's ephemeral key.
        try mixKeyAndHash(psk)
    }

    static var unavailable: Failure {
        Failure(description: "libcrypto cannot be used: \(AES128.unavailableReason ?? "it refused a key")")
    }

    /// The first message (`psk, e`): the ephemeral public key, then the empty payload's tag.
    public mutating func firstMessage() throws(Failure) -> [UInt8] {
        guard let e = NoisePrimitives.x25519Public(ephemeral) else { throw Self.unavailable }
        try mixHash(e)
        try mixKey(e)  // psk handshakes mix each ephemeral key into the chaining key too
        return e + (try encryptAndHash([]))
    }

    /// Reads the responder's message (`e, ee`) and splits: the ciphers to send and receive with.
    public mutating func readSecond(_ message: [UInt8]) throws(Failure) -> (send: NoiseCipher, receive: NoiseCipher) {
        guard message.count >= 32 + 16 else {
            throw Failure(description: "the proxy's handshake answer is \(message.count) bytes, too short")
        }
        let re = Array(message[0..<32])
        try mixHash(re)
        try mixKey(re)
        guard let shared = NoisePrimitives.x25519(ephemeral, re) else {
            throw Failure(description: "the proxy's handshake key is not a usable X25519 key")
        }
        try mixKey(shared)
        _ = try decryptAndHash(Array(message[32...]))
        guard let (k1, k2) = hkdf2(ck, []) else { throw Self.unavailable }
        return (NoiseCipher(key: k1), NoiseCipher(key: k2))
    }

    private mutating func mixHash(_ data: [UInt8]) throws(Failure) {
        guard let next = NoisePrimitives.sha256(h + data) else { throw Self.unavailable }
        h = next
    }

    private mutating func mixKey(_ input: [UInt8]) throws(Failure) {
        guard let (next, key) = hkdf2(ck, input) else { throw Self.unavailable }
        (ck, k, n) = (next, key, 0)
    }

    private mutating func mixKeyAndHash(_ input: [UInt8]) throws(Failure) {
        guard let temp = NoisePrimitives.hmacSHA256(key: ck, input),
            let o1 = NoisePrimitives.hmacSHA256(key: temp, [1]),
            let o2 = NoisePrimitives.hmacSHA256(key: temp, o1 + [2]),
            let o3 = NoisePrimitives.hmacSHA256(key: temp, o2 + [3])
        else { throw Self.unavailable }
        ck = o1
        try mixHash(o2)
        (k, n) = (o3, 0)
    }

    private mutating func encryptAndHash(_ plain: [UInt8]) throws(Failure) -> [UInt8] {
        guard let k, let sealed = NoisePrimitives.seal(key: k, nonce: NoiseCipher.nonce(n), ad: h, plain) else {
            throw Self.unavailable
        }
        n += 1
        try mixHash(sealed)
        return sealed
    }

    private mutating func decryptAndHash(_ sealed: [UInt8]) throws(Failure) -> [UInt8] {
        guard let k, let plain = NoisePrimitives.open(key: k, nonce: NoiseCipher.nonce(n), ad: h, sealed) else {
            throw Failure(description: "the proxy's handshake does not verify: its encryption key is not this one")
        }
        n += 1
        try mixHash(sealed)
        return plain
    }

    /// HKDF with two outputs, as the Noise specification defines it over HMAC-SHA256.
    private func hkdf2(_ chainingKey: [UInt8], _ input: [UInt8]) -> ([UInt8], [UInt8])? {
        guard let temp = NoisePrimitives.hmacSHA256(key: chainingKey, input),
            let o1 = NoisePrimitives.hmacSHA256(key: temp, [1]),
            let o2 = NoisePrimitives.hmacSHA256(key: temp, o1 + [2])
        else { return nil }
        return (o1, o2)
    }
}

/// One direction of an established Noise session: ChaCha20-Poly1305 under its key, the nonce
/// counting messages.
public struct NoiseCipher: Sendable {
    let key: [UInt8]
    private(set) var n: UInt64 = 0

    init(key: [UInt8]) { self.key = key }

    /// Noise's ChaChaPoly nonce: four zero bytes, then the counter little-endian.
    static func nonce(_ n: UInt64) -> [UInt8] {
        [0, 0, 0, 0] + (0..<8).map { UInt8(truncatingIfNeeded: n >> (8 * UInt64($0))) }
    }

    public mutating func encrypt(_ plain: [UInt8]) -> [UInt8]? {
        defer { n += 1 }
        return NoisePrimitives.seal(key: key, nonce: Self.nonce(n), ad: [], plain)
    }

    public mutating func decrypt(_ sealed: [UInt8]) -> [UInt8]? {
        guard let plain = NoisePrimitives.open(key: key, nonce: Self.nonce(n), ad: [], sealed) else { return nil }
        n += 1
        return plain
    }
}
