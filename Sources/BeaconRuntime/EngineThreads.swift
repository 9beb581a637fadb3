import BeaconCore
import Glibc
import POSIX

/// The threads the engine borrows for each tick's per-asset work (`engine.threads`, issue 64):
/// `shards - 1` threads of their own, parked between ticks, and the caller's.
///
/// Why parked threads and not one per tick: a tick comes every second for hours; starting
/// threads for each would cost more than a small site's whole tick. Why a mutex and two
/// condition variables: a tick hands out work once and waits for all of it, nothing finer.
public final class EngineThreads: ShardRunner, @unchecked Sendable {
    public let shards: Int
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let wake = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let finished = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Guarded by `mutex`: the work of the tick under way, its number, how many threads have
    /// yet to finish it, and whether the threads are to end.
    private var body: (@Sendable (Int) -> Void)?
    private var generation = 0
    private var remaining = 0
    private var stopping = false
    private var running = 0

    /// `threads` in all, the caller's included (at least 1: then `run` is a plain call).
    public init(threads: Int) {
        shards = max(1, threads)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(wake, nil)
        pthread_cond_init(finished, nil)
        running = shards - 1
        for shard in 1..<max(shards, 1) {
            detachThread(named: "beacond-shard\(shard)") { [self] in serve(shard) }
        }
    }

    deinit {
        pthread_cond_destroy(finished)
        pthread_cond_destroy(wake)
        pthread_mutex_destroy(mutex)
        for p in [finished, wake] { p.deallocate() }
        mutex.deallocate()
    }

    public func run(_ body: @Sendable (Int) -> Void) {
        guard shards > 1 else { return body(0) }
        withoutActuallyEscaping(body) { body in
            pthread_mutex_lock(mutex)
            self.body = body
            remaining = shards - 1
            generation += 1
            pthread_cond_broadcast(wake)
            pthread_mutex_unlock(mutex)
            body(0)
            pthread_mutex_lock(mutex)
            while remaining > 0 { pthread_cond_wait(finished, mutex) }
            self.body = nil
            pthread_mutex_unlock(mutex)
        }
    }

    /// Ends the threads once they are parked (a replay's or a test's engine that is done);
    /// `run` must not be called after.
    public func stop() {
        pthread_mutex_lock(mutex)
        stopping = true
        pthread_cond_broadcast(wake)
        while running > 0 { pthread_cond_wait(finished, mutex) }
        pthread_mutex_unlock(mutex)
    }

    private func serve(_ shard: Int) {
        var seen = 0
        pthread_mutex_lock(mutex)
        while true {
            while generation == seen && !stopping { pthread_cond_wait(wake, mutex) }
            if stopping { break }
            seen = generation
            let body = self.body!
            pthread_mutex_unlock(mutex)
            body(shard)
            pthread_mutex_lock(mutex)
            remaining -= 1
            if remaining == 0 { pthread_cond_signal(finished) }
        }
        running -= 1
        pthread_cond_broadcast(finished)
        pthread_mutex_unlock(mutex)
    }
}
