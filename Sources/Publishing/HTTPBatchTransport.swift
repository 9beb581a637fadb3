import BeaconCore
import Crypto
import POSIX
import Storage
import Synchronization

/// A webhook's receiver: each batch POSTed as a CloudEvents JSON batch with the webhook's
/// headers and signature (SPEC §4.2), a 2xx taking it. The libcurl handle is made at the
/// first send, on the worker's thread, and kept for its connection cache: a worker that never
/// sends (a standby, a test's) costs no TLS set-up. The handle is used by the worker's thread
/// alone; `abort` (any thread) goes through the poster's atomic deadline, or is kept until
/// the handle exists.
public final class HTTPBatchTransport: BatchTransport, Sendable {
    let settings: WebhookWorker.Settings
    let clock: @Sendable () -> Timestamp
    private let poster = Mutex<HTTPPoster?>(nil)
    /// An abort asked before the first send: `SystemClock.monotonicMillis` to give up at.
    private let abortAt = Mutex<Int64?>(nil)

    public init(settings: WebhookWorker.Settings, clock: @escaping @Sendable () -> Timestamp) {
        self.settings = settings
        self.clock = clock
    }

    public func send(_ batch: [StateStore.OutboxEntry], timeout: TimeSpan) throws(DeliveryFailure) {
        let request = try SignedRequest(
            settings, events: batch.lazy.map(\.body), at: clock(), messageID: Self.messageID(batch))
        let outcome = currentPoster().post(
            url: settings.url, body: request.body, headers: request.headers,
            timeoutMillis: Int(timeout.nanoseconds / 1_000_000))
        switch outcome {
        case let .status(code) where (200..<300).contains(code): return
        case let .status(code): throw .status(code)
        case let .failed(message): throw .unreachable(message)
        }
    }

    public func abort(after wait: TimeSpan) {
        let at = SystemClock.monotonicMillis + wait.nanoseconds / 1_000_000
        abortAt.withLock { $0 = at }
        poster.withLock { $0?.abort(at: at) }
    }

    private func currentPoster() -> HTTPPoster {
        poster.withLock { poster in
            if let poster { return poster }
            let made = HTTPPoster()
            if let at = abortAt.withLock({ $0 }) { made.abort(at: at) }
            poster = made
            return made
        }
    }

    /// A batch's message id: its first and last events' ids, so a retry of the same events
    /// carries the same id.
    static func messageID(_ batch: [StateStore.OutboxEntry]) -> String {
        guard let first = batch.first, let last = batch.last else { return "empty" }
        return first.eventID == last.eventID ? first.eventID : "\(first.eventID)_\(last.eventID)"
    }
}
