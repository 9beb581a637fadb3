import CCrypto
import Synchronization

/// Identity resolving keys, each with its AES-128 key schedule made once, tried in one loop:
/// what resolving a new private address against a store's badges costs (about 13 ns a key).
///
/// Used under a lock: the engine's thread is the only caller in the daemon, so it is never
/// contended; it only makes a shared copy (a snapshot of the engine) safe.
public final class ResolvingKeys: Sendable {
    private let contexts: Mutex<Contexts>
    public let count: Int

    private struct Contexts: ~Copyable {
        let pointers: UnsafeMutablePointer<OpaquePointer?>
        let count: Int
        deinit {
            for i in 0..<count { beacond_aes128_free(pointers[i]) }
            pointers.deallocate()
        }
    }

    /// Keys that are not 16 bytes, or that libcrypto refuses, are left out (`count` says how
    /// many were taken); an index answered is into `keys`.
    public init(keys: [[UInt8]]) {
        let pointers = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: max(keys.count, 1))
        var n = 0
        var taken: [Int] = []
        for (i, key) in keys.enumerated() where key.count == 16 {
            guard let ctx = AES128.make(key: key) else { continue }
            pointers[n] = ctx
            n += 1
            taken.append(i)
        }
        contexts = Mutex(Contexts(pointers: pointers, count: n))
        count = n
        original = taken
    }

    /// Position in the `keys` given of each context.
    private let original: [Int]

    /// For each `(prand, hash)`, the index (into the keys given) of the first key whose
    /// `ah(k, prand)` is `hash`, or nil: the keys read once for all of them.
    public func keys(resolving addresses: [(prand: UInt32, hash: UInt32)]) -> [Int?] {
        let n = addresses.count
        guard n > 0 else { return [] }
        var blocks = [UInt8](repeating: 0, count: 16 * n)
        var hashes = [UInt32](repeating: 0, count: n)
        for (j, a) in addresses.enumerated() {
            blocks[16 * j + 13] = UInt8(truncatingIfNeeded: a.prand >> 16)
            blocks[16 * j + 14] = UInt8(truncatingIfNeeded: a.prand >> 8)
            blocks[16 * j + 15] = UInt8(truncatingIfNeeded: a.prand)
            hashes[j] = a.hash
        }
        var found = [Int32](repeating: -1, count: n)
        var scratch = [UInt8](repeating: 0, count: 16 * n)
        contexts.withLock { c in
            beacond_resolve_rpas(c.pointers, Int32(c.count), blocks, hashes, Int32(n), &found, &scratch)
        }
        return found.map { $0 >= 0 ? original[Int($0)] : nil }
    }

    /// The index (into the keys given) of the first key whose `ah(k, prand)` is `hash`.
    public func key(resolving prand: UInt32, hash: UInt32) -> Int? {
        let i = contexts.withLock { c in
            beacond_resolve_rpa(c.pointers, Int32(c.count), UInt32(prand), UInt32(hash))
        }
        return i >= 0 ? original[Int(i)] : nil
    }
}
