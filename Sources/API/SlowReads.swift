import POSIX
import Synchronization

/// Reads that take real work — `GET /v1/beacons` over a full table — run here, one at a time,
/// on a thread of their own (`HTTPReply.later`): the server's thread, which serves every
/// client, only hands them over. At most `maxQueued` wait; past that a reader is told to
/// come back rather than queue more work.
final class SlowReads: Sendable {
    private struct Queue {
        var jobs: [@Sendable () -> Void] = []
        var running = false
    }

    private let queue = Mutex(Queue())
    static let maxQueued = 32

    /// Queues `job`; false when too many are waiting.
    func run(_ job: @escaping @Sendable () -> Void) -> Bool {
        let start = queue.withLock { q -> Bool? in
            guard q.jobs.count < Self.maxQueued else { return nil }
            q.jobs.append(job)
            defer { q.running = true }
            return !q.running
        }
        guard let start else { return false }
        if start { detachThread { [self] in drain() } }
        return true
    }

    private func drain() {
        while let job = queue.withLock({ q -> (@Sendable () -> Void)? in
            guard !q.jobs.isEmpty else {
                q.running = false
                return nil
            }
            return q.jobs.removeFirst()
        }) {
            job()
        }
    }
}
