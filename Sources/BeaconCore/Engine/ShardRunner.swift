/// Lends the engine threads for its per-asset work (issue 64, `engine.threads`): `run` calls
/// `body` once for each shard in `0..<shards`, each on a thread of its own (the caller's among
/// them), and returns when every call has returned.
///
/// Why a protocol the core only calls: the core stays plain Swift driven by values, and
/// whatever runs it — the daemon, a replay, a benchmark, a test — decides how many threads it
/// has; without one, everything runs on the caller's thread, as it did before.
public protocol ShardRunner: Sendable {
    var shards: Int { get }
    func run(_ body: @Sendable (Int) -> Void)
}

/// The states of many assets, lent to the shards of one `ShardRunner.run`: each shard
/// reads and writes only the assets it owns (`owns`), so no two threads touch one element.
struct ShardedStates<State, Output>: @unchecked Sendable {
    let states: UnsafeMutableBufferPointer<State>
    let outputs: UnsafeMutableBufferPointer<Output>
    /// Assets go to shards in blocks of up to 16, in turn: blocks keep neighbouring elements
    /// (a cache line) on one thread, turns spread a crowd of walking tags over every thread.
    /// A small site's blocks are smaller, so that each thread still gets some.
    func owned(by shard: Int, of shards: Int) -> [Int] {
        let count = states.count
        let block = min(16, max(1, count / (4 * shards)))
        return stride(from: shard * block, to: count, by: shards * block).flatMap { first in
            first..<min(first + block, count)
        }
    }
}
