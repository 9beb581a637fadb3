import BeaconCore
import POSIX
import Synchronization

/// A test delivery (`POST /v1/webhooks/{id}/test`, `beaconctl test-webhook`): what an operator
/// wiring a CRM or WMS to the gateway needs to see before the first real alert depends on it —
/// the TLS handshake, the path, the receiver's answer to a signed batch. `beaconctl doctor`
/// only tries the host's port; this goes all the way.
extension WebhookWorker {
    /// What the receiver answered, or why there was no answer, and how long it took.
    public struct TestResult: Sendable, Equatable {
        public var status: Int?
        public var error: String?
        public var millis: Double
        public var ok: Bool { status.map { (200..<300).contains($0) } ?? false }
    }

    /// `sendTest` on a thread of its own, then `done` with what came of it. False, and no
    /// call, when a test of this webhook is still under way: an operator pressing again at a
    /// receiver that hangs must not pile up threads behind it.
    public func startTest(
        _ event: String, at t: Timestamp, done: @escaping @Sendable (TestResult) -> Void
    ) -> Bool {
        guard testRunning.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return false }
        detachThread { [self] in
            let result = sendTest(event, at: t)
            testRunning.store(false, ordering: .releasing)
            // The receiver answers again: what waits on the backoff goes now, not minutes later.
            if result.ok { retryNow() }
            done(result)
        }
        return true
    }

    /// Sends `event` (one CloudEvent's JSON) now, as a batch of one, with the headers and
    /// signature of a real delivery; outside the outbox: not stored, not retried, not counted,
    /// and sent even to a webhook disabled by a 410, to check its receiver before re-enabling
    /// it. Waits up to the webhook's `timeout`.
    public func sendTest(_ event: String, at t: Timestamp) -> TestResult {
        let request: SignedRequest
        do {
            request = try SignedRequest(settings, events: [event], at: t, messageID: "test_\(t.nanoseconds)")
        } catch {
            return TestResult(status: nil, error: error.description, millis: 0)
        }
        let outcome = HTTPPoster().post(
            url: settings.url, body: request.body, headers: request.headers,
            timeoutMillis: Int(settings.timeout.nanoseconds / 1_000_000))
        let millis = (clock() - t).seconds * 1000
        switch outcome {
        case let .status(code): return TestResult(status: code, error: nil, millis: millis)
        case let .failed(message): return TestResult(status: nil, error: message, millis: millis)
        }
    }
}
