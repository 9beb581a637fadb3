import BeaconCore
import Foundation
import MQTT
import Publishing
import Storage
import Synchronization
import TestSupport
import Testing

/// The site's event batches over a broker connection that answers as it is told (issue 39,
/// items 3 and 8): when a batch counts as taken, and every way it is not. One real mosquitto
/// still checks the whole path (`SiteOutputTests`, `aPublishTheBrokerRefusesIsNotDelivered`).
@Suite struct MQTTBatchTransportTests {
    /// Publishes into a list; connected while `connected` says so.
    final class Connection: MQTTConnection {
        let connected = Atomic<Bool>(true)
        let sent = Mutex<[(mid: Int32, message: MQTTClient.Message)]>([])

        var state: MQTTClient.State {
            var state = MQTTClient.State()
            state.connected = connected.load(ordering: .relaxed)
            return state
        }

        func publish(_ message: MQTTClient.Message) -> Int32? {
            guard connected.load(ordering: .relaxed) else { return nil }
            return sent.withLock { list in
                let mid = Int32(list.count + 1)
                list.append((mid, message))
                return mid
            }
        }

        var qos1: [Int32] { sent.withLock { $0.filter { $0.message.qos == 1 }.map(\.mid) } }
    }

    /// Two zone alerts and a position, as the outbox holds them.
    static func batch() throws -> [StateStore.OutboxEntry] {
        let store = try StateStore(directory: NSTemporaryDirectory() + "beacond-mqtt-batch-\(UUID().uuidString)")
        let t = Timestamp.seconds(1_763_805_600)
        try store.append(
            [
                .init(id: "e1", type: "beacond.zone.enter", time: t, body: "{\"id\":\"e1\"}"),
                .init(id: "e2", type: "beacond.asset.position", time: t, body: "{\"id\":\"e2\"}"),
                .init(id: "e3", type: "beacond.zone.exit", time: t, body: "{\"id\":\"e3\"}"),
            ], at: t, webhooks: { _ in [MQTTBatchTransport.outboxID] })
        return try store.pending(webhook: MQTTBatchTransport.outboxID, limit: 10)
    }

    /// `send` on a thread of its own (it waits for the broker); its outcome once it returns.
    enum Outcome: Equatable, Sendable {
        case taken
        case failed(DeliveryFailure)
    }

    final class Sending: Sendable {
        let outcome = Mutex<Outcome?>(nil)
        init(_ transport: MQTTBatchTransport, _ batch: [StateStore.OutboxEntry], timeout: TimeSpan = .seconds(10)) {
            Thread { [self] in
                let result: Outcome
                do throws(DeliveryFailure) {
                    try transport.send(batch, timeout: timeout)
                    result = .taken
                } catch { result = .failed(error) }
                outcome.withLock { $0 = result }
            }.start()
        }

        func wait() throws -> Outcome {
            try eventually("send to return") { outcome.withLock { $0 } != nil }
            return outcome.withLock { $0! }
        }
    }

    @Test func aBatchIsTakenOnceTheBrokerAcknowledgedEachAlert() throws {
        let connection = Connection()
        let transport = MQTTBatchTransport(client: connection, topics: SiteTopics(site: "store-1"))
        let sending = Sending(transport, try Self.batch())
        try eventually("three publishes") { connection.sent.withLock { $0.count } == 3 }
        let sent = connection.sent.withLock { $0.map(\.message) }
        #expect(
            sent.map(\.topic) == [
                "beacond/store-1/events/zone.enter", "beacond/store-1/events/asset.position",
                "beacond/store-1/events/zone.exit",
            ])
        #expect(sent.map(\.qos) == [1, 0, 1] && sent.allSatisfy { !$0.retain })
        transport.published(connection.qos1[0], refused: nil)
        try stays("waiting for the second acknowledgement", for: 0.2) { sending.outcome.withLock { $0 } == nil }
        transport.published(connection.qos1[1], refused: nil)
        #expect(try sending.wait() == .taken)
    }

    @Test func aRefusalFailsTheBatchWithTheBrokersReason() throws {
        let connection = Connection()
        let transport = MQTTBatchTransport(client: connection, topics: SiteTopics(site: "store-1"))
        let sending = Sending(transport, try Self.batch())
        try eventually("the alerts published") { connection.qos1.count == 2 }
        transport.published(connection.qos1[0], refused: nil)
        transport.published(connection.qos1[1], refused: "not authorized (0x87)")
        #expect(try sending.wait() == .failed(.refused("the broker refused the events: not authorized (0x87)")))
    }

    @Test func noConnectionOrALostOneFailsTheBatchAsUnreachable() throws {
        let connection = Connection()
        let transport = MQTTBatchTransport(client: connection, topics: SiteTopics(site: "store-1"))
        connection.connected.store(false, ordering: .relaxed)
        #expect(try Sending(transport, try Self.batch()).wait() == .failed(.unreachable("not connected to the broker")))
        #expect(connection.sent.withLock { $0.isEmpty })

        connection.connected.store(true, ordering: .relaxed)
        let sending = Sending(transport, try Self.batch())
        try eventually("the alerts published") { connection.qos1.count == 2 }
        transport.published(connection.qos1[0], refused: nil)
        connection.connected.store(false, ordering: .relaxed)
        #expect(
            try sending.wait()
                == .failed(.unreachable("the broker connection dropped before it acknowledged 1 events")))
    }

    /// A stop cuts a batch the broker never answers: `abort(after:)` ends the wait.
    @Test func anAbortEndsTheWaitForABrokerThatNeverAnswers() throws {
        let connection = Connection()
        let transport = MQTTBatchTransport(client: connection, topics: SiteTopics(site: "store-1"))
        let sending = Sending(transport, try Self.batch(), timeout: .seconds(60))
        try eventually("the alerts published") { connection.qos1.count == 2 }
        transport.abort(after: .milliseconds(0))
        guard case let .failed(.unreachable(why)) = try sending.wait() else {
            Issue.record("expected the batch to fail unacknowledged")
            return
        }
        #expect(why.contains("did not acknowledge 2 events"))
    }
}
