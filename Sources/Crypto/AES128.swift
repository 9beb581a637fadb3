import CCrypto
import Synchronization

/// AES-128 on single blocks, its key schedule made once: what the Bluetooth Core
/// specification's `e` function is, and so what resolving a phone's address costs.
///
/// Why the system's libcrypto and not a cipher of our own: a maintained, constant-time
/// implementation with the processor's AES instructions (12 ns a block here, against 85 ns
/// for OpenSSL's portable table code), on every Debian gateway already (libcurl uses it).
/// One context per key, used under a lock: the engine's thread is the only caller in the
/// daemon, so the lock is never contended; it only makes a shared copy safe.
public final class AES128: Sendable {
    private let context: Mutex<Context>

    private struct Context: ~Copyable {
        let pointer: OpaquePointer
        deinit { EVP_CIPHER_CTX_free(pointer) }
    }

    /// Nil when `key` is not 16 bytes or libcrypto refuses it.
    public init?(key: [UInt8]) {
        guard let ctx = Self.context(key: key) else { return nil }
        context = Mutex(Context(pointer: ctx))
    }

    /// A libcrypto AES-128-ECB encryption context for `key`, without padding; the caller
    /// frees it.
    static func context(key: [UInt8]) -> OpaquePointer? {
        guard key.count == 16, let ctx = EVP_CIPHER_CTX_new() else { return nil }
        let ok = key.withUnsafeBufferPointer { k in
            EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), nil, k.baseAddress, nil) == 1
        }
        guard ok, EVP_CIPHER_CTX_set_padding(ctx, 0) == 1 else {
            EVP_CIPHER_CTX_free(ctx)
            return nil
        }
        return ctx
    }

    /// `block` (16 bytes) encrypted; nil only if libcrypto fails.
    public func encrypt(_ block: Block) -> Block? {
        var input = block
        var output = Block()
        let ok = context.withLock { ctx -> Bool in
            var length: Int32 = 0
            return withUnsafeBytes(of: &input) { i in
                withUnsafeMutableBytes(of: &output) { o in
                    EVP_EncryptUpdate(
                        ctx.pointer, o.baseAddress!.assumingMemoryBound(to: UInt8.self), &length,
                        i.baseAddress!.assumingMemoryBound(to: UInt8.self), 16) == 1 && length == 16
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
