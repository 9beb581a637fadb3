import BeaconCore
import Storage

/// Where a worker's batches go when they do not go to an HTTP receiver: the site's MQTT
/// broker (`events/<type>`, SPEC §6.2). The outbox, its order, its retries and its dead
/// letters stay the worker's, so events over MQTT keep every guarantee webhooks have.
public protocol BatchTransport: Sendable {
    /// Sends `batch` in order and waits up to `timeout` for the far side to take all of it:
    /// nil when it did (the entries may be deleted), else why not (the batch is sent again).
    func send(_ batch: [StateStore.OutboxEntry], timeout: TimeSpan) -> String?
    /// Makes a `send` under way give up within `seconds` (any thread; a stop).
    func abort(after seconds: Double)
}
