import CCrypto
import Synchronization

/// AES-128 on single blocks, its key schedule made once: what the Bluetooth Core
/// specification's `e` function is, and so what resolving a phone's address costs.
///
/// Why the system's libcrypto and not a cipher of our own: a maintained, constant-time
/// implementation with the processor's AES instructions (12 ns a block here, against 85 ns
/// for OpenSSL's portable table code), on every Debian gateway already (libcurl uses it).
/// Loaded at first use (`CCrypto`). Used under a lock: the engine's thread is the only caller
/// in the daemon, so the lock is never contended; it only makes a shared copy safe.
public final class AES128: Sendable {
    private let cipher: Mutex<Cipher>

    struct Cipher: ~Copyable {
        let pointer: OpaquePointer
        deinit { beacond_aes128_free(pointer) }
    }

    /// Nil when `key` is not 16 bytes, or libcrypto is unavailable (`unavailableReason`) or
    /// refuses it.
    public init?(key: [UInt8]) {
        guard let made = Self.make(key: key) else { return nil }
        cipher = Mutex(Cipher(pointer: made))
    }

    /// Why libcrypto cannot be used, or nil.
    public static var unavailableReason: String? { beacond_crypto_unavailable_reason().map { String(cString: $0) } }

    /// A libcrypto AES-128-ECB context for `key`; the caller frees it.
    static func make(key: [UInt8]) -> OpaquePointer? {
        guard key.count == 16 else { return nil }
        return key.withUnsafeBufferPointer { beacond_aes128_new($0.baseAddress) }
    }

    /// `block` (16 bytes) encrypted; nil only if libcrypto fails.
    public func encrypt(_ block: Block) -> Block? {
        var input = block
        var output = Block()
        let ok = cipher.withLock { c -> Bool in
            withUnsafeBytes(of: &input) { i in
                withUnsafeMutableBytes(of: &output) { o in
                    beacond_aes128_encrypt(
                        c.pointer, i.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        o.baseAddress!.assumingMemoryBound(to: UInt8.self), 1) == 1
                }
            }
        }
        return ok ? output : nil
    }

    /// Sixteen bytes, first byte first, without a heap allocation.
    public struct Block: Sendable, Equatable {
        public var bytes: (UInt64, UInt64) = (0, 0)
        public init() {}

        public init(_ array: [UInt8]) {
            precondition(array.count == 16)
            withUnsafeMutableBytes(of: &bytes) { $0.copyBytes(from: array) }
        }

        public subscript(_ i: Int) -> UInt8 {
            get { withUnsafeBytes(of: bytes) { $0[i] } }
            set { withUnsafeMutableBytes(of: &bytes) { $0[i] = newValue } }
        }

        public var array: [UInt8] { withUnsafeBytes(of: bytes) { Array($0) } }

        public static func == (a: Block, b: Block) -> Bool { a.bytes == b.bytes }
    }
}
