import BeaconCore
import Storage

/// Where an outbox worker's batches go: a webhook's HTTP receiver (`HTTPBatchTransport`) or the
/// site's MQTT broker (`events/<type>`, SPEC §6.2). The outbox, its order, its retries and its
/// dead letters are the worker's, whatever the transport, so events over MQTT keep every
/// guarantee webhooks have; a transport only sends a batch and says whether it was taken.
public protocol BatchTransport: Sendable {
    /// Sends `batch` in order and waits up to `timeout` for the far side to take all of it.
    /// Returns when it did (the entries may be deleted); throws why not (the batch is sent
    /// again, or for `.status(410)` the webhook is disabled).
    func send(_ batch: [StateStore.OutboxEntry], timeout: TimeSpan) throws(DeliveryFailure)
    /// Makes a `send` under way, or the next, give up within `wait` (any thread; a stop).
    func abort(after wait: TimeSpan)
}

/// Why a batch was not taken, as a worker acts on it: a 410 disables the webhook; every other
/// failure is retried with backoff and shown in status as `last_error`.
public enum DeliveryFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The receiver answered with a status that is not 2xx.
    case status(Int)
    /// No answer: refused connection, DNS, TLS, a timeout, no broker connection.
    case unreachable(String)
    /// The far side answered and refused the batch (a broker's PUBACK reason code).
    case refused(String)

    public var description: String {
        switch self {
        case let .status(code): return "HTTP \(code)"
        case let .unreachable(why), let .refused(why): return why
        }
    }
}
