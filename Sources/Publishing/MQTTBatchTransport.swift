import BeaconCore
import Dispatch
import MQTT
import POSIX
import Storage
import Synchronization

/// The site's events on the broker (`events/<type>`, SPEC §6.2): the locator's outbox worker
/// for MQTT hands each batch here. A batch counts as sent only when the broker has
/// acknowledged every QoS 1 event in it, so an event is deleted from the outbox only once the
/// broker holds it; a broker that is down, or drops the connection mid-batch, gets the batch
/// again (at-least-once, in order, with the same event ids). `asset.position`, `ranging` and
/// `beacon.proximity` go at QoS 0: the next one replaces them.
public final class MQTTBatchTransport: BatchTransport, Sendable {
    /// The outbox these events wait in: not a valid webhook id, so no webhook can share it.
    public static let outboxID = "mqtt:events"
    /// Whether an event of `kind` goes at QoS 0: one the next replaces (`EventClass.state`).
    public static func lossy(_ kind: String) -> Bool { EventClass(type: kind).isSuperseded }

    private let client: any MQTTConnection
    private let topics: SiteTopics
    /// Message ids the broker answered since the current batch began: nil when it took the
    /// message, else why it refused it.
    private let acknowledged = Mutex<[Int32: String?]>([:])
    private let wake = DispatchSemaphore(value: 0)
    /// `SystemClock.monotonicMillis` after which a send gives up (a stop); `.max`: none.
    private let abortAt = Atomic<Int64>(.max)

    public init(client: any MQTTConnection, topics: SiteTopics) {
        self.client = client
        self.topics = topics
    }

    /// The broker answered message `mid` (the client's thread): took it, or refused it (an
    /// ACL that denies `events/#`), which fails the batch: it stays in the outbox.
    public func published(_ mid: Int32, refused: String?) {
        acknowledged.withLock { $0[mid] = .some(refused) }
        wake.signal()
    }

    public func abort(after wait: TimeSpan) {
        abortAt.store(SystemClock.monotonicMillis + wait.nanoseconds / 1_000_000, ordering: .relaxed)
        wake.signal()
    }

    /// An outbox entry's event type as the topic names it (`beacond.zone.enter` → `zone.enter`).
    public static func kind(_ type: String) -> String { type.hasPrefix("beacond.") ? String(type.dropFirst(8)) : type }

    public func send(_ batch: [StateStore.OutboxEntry], timeout: TimeSpan) throws(DeliveryFailure) {
        guard client.state.connected else { throw .unreachable("not connected to the broker") }
        acknowledged.withLock { $0.removeAll(keepingCapacity: true) }
        var waiting = Set<Int32>()
        for entry in batch {
            let kind = Self.kind(entry.type)
            let qos: Int32 = Self.lossy(kind) ? 0 : 1
            let message = MQTTClient.Message(
                topic: topics[.events(kind: kind)], text: entry.body, qos: qos, retain: false)
            guard let mid = client.publish(message) else {
                throw .unreachable("the broker connection dropped while publishing")
            }
            if qos == 1 { waiting.insert(mid) }
        }
        let deadline = SystemClock.monotonicMillis + timeout.nanoseconds / 1_000_000
        while true {
            let answers = acknowledged.withLock { $0 }
            if let refusal = waiting.lazy.compactMap({ answers[$0] ?? nil }).first {
                throw .refused("the broker refused the events: \(refusal)")
            }
            waiting.subtract(answers.keys)
            if waiting.isEmpty { return }
            guard client.state.connected else {
                throw .unreachable("the broker connection dropped before it acknowledged \(waiting.count) events")
            }
            let now = SystemClock.monotonicMillis
            if now >= min(deadline, abortAt.load(ordering: .relaxed)) {
                throw .unreachable("the broker did not acknowledge \(waiting.count) events within \(timeout)")
            }
            _ = wake.wait(timeout: .now() + .milliseconds(100))
        }
    }
}
