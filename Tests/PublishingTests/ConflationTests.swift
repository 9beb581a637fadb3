import BeaconCore
import Foundation
import Logs
import Storage
import Synchronization
import TestSupport
import Testing

@testable import Publishing

/// Issue 53 (SPEC §4.4): an output that is behind gets every alert in order and, of the
/// positions, the latest of each asset, then the new ones — not a backlog of stale ones.
/// Positions never wait in the outbox; what was replaced unsent is counted.
@Suite struct ConflationTests {
    static let start = Timestamp.seconds(1_763_805_600)

    /// A receiver that is down (every batch refused as unreachable) until told it is back.
    final class Receiver: BatchTransport, Sendable {
        let down = Atomic<Bool>(true)
        let taken = Mutex<[StateStore.OutboxEntry]>([])

        func send(_ batch: [StateStore.OutboxEntry], timeout: TimeSpan) throws(DeliveryFailure) {
            guard !down.load(ordering: .relaxed) else { throw .unreachable("connection refused") }
            taken.withLock { $0 += batch }
        }

        func abort(after wait: TimeSpan) {}
    }

    static func position(_ asset: String, x: Double, at t: Timestamp) -> Event {
        Event(
            time: t,
            payload: .assetPosition(
                AssetFix(asset: asset, position: Point(x: x, y: 2), level: 0, accuracy: 1, zones: [], receivers: [])))
    }

    static func alert(_ asset: String, enter: Bool, at t: Timestamp) -> Event {
        Event(
            time: t,
            payload: .zone(
                ZoneAlert(
                    alarm: "a", asset: asset, zone: "dock", condition: enter ? .enter : .exit, position: nil,
                    level: nil)))
    }

    /// The clock the test moves.
    final class Now: Sendable {
        private let time: Mutex<Timestamp>
        init(_ t: Timestamp) { time = Mutex(t) }
        func withLock<R>(_ body: (inout Timestamp) -> R) -> R { time.withLock { body(&$0) } }
    }

    /// A webhook of these events on a receiver that is down, and a publisher for it, on a clock
    /// the test moves.
    static func output(events: [String], maxAge: TimeSpan) throws -> (
        StateStore, Now, Receiver, WebhookWorker, EventPublisher
    ) {
        let store = try StateStore(directory: NSTemporaryDirectory() + "beacond-conflation-\(UUID().uuidString)")
        let now = Now(Self.start)
        let clock: @Sendable () -> Timestamp = { now.withLock { $0 } }
        let receiver = Receiver()
        let worker = WebhookWorker(
            settings: .init(
                id: "wms", url: "http://127.0.0.1:9/hook", events: EventTypeGlob(events), secret: nil,
                schedule: DeliverySchedule(maxEvents: 50, maxDelay: .seconds(0), maxAge: maxAge),
                timeout: .seconds(1)),
            store: store, clock: clock, logger: .silent, transport: receiver)
        let publisher = EventPublisher(
            gateway: "gw", store: store, workers: [worker], echo: false, clock: clock, logger: .silent)
        return (store, now, receiver, worker, publisher)
    }

    /// 200 assets placed every second for ten minutes, an alert every 5 s, while the receiver
    /// is down; then it is back.
    @Test func aReceiverBackAfterTenMinutesGetsEveryAlertAndTheLatestPositionOfEachAsset() throws {
        let (store, now, receiver, worker, publisher) = try Self.output(events: ["*"], maxAge: .hours(1))
        // What everyone was told: the alerts' ids, and how many positions.
        let told = Mutex<(alerts: [String], positions: Int)>(([], 0))
        publisher.addListener { batch, _ in
            told.withLock { t in
                for e in batch {
                    if EventClass(type: e.type).isState { t.positions += 1 } else { t.alerts.append(e.id) }
                }
            }
        }
        Thread { worker.run() }.start()
        defer {
            worker.stop()
            worker.waitUntilFinished()
        }
        let assets = (0..<200).map { "tag-\($0)" }
        for second in 0..<600 {
            let t = Self.start + .seconds(Int64(second))
            now.withLock { $0 = t }
            var turn = assets.map { Self.position($0, x: Double(second), at: t) }
            if second % 5 == 0 { turn.append(Self.alert(assets[second % 200], enter: second % 10 == 0, at: t)) }
            publisher.publish(turn)
        }
        let alerts = told.withLock { $0.alerts }
        #expect(alerts.count == 120)
        #expect(told.withLock { $0.positions } == 200 * 600)
        #expect(receiver.taken.withLock { $0 }.isEmpty)
        #expect(try store.pending(webhook: "wms", limit: 1000).count == 120, "the alerts alone wait in the outbox")
        #expect(worker.counters.positionsWaiting == 200)

        receiver.down.store(false, ordering: .relaxed)
        worker.retryNow()
        try eventually("everything waiting sent") {
            try store.pending(webhook: "wms", limit: 1).isEmpty && worker.counters.positionsWaiting == 0
        }
        var taken = receiver.taken.withLock { $0 }
        #expect(taken.filter(\.isStored).map(\.eventID) == alerts, "every alert, in order")
        let positions = taken.filter { !$0.isStored }
        #expect(positions.count == 200, "one position per asset")
        #expect(Set(positions.map(\.body)).count == 200)
        #expect(
            positions.allSatisfy { $0.body.contains("\"x\":599") }, "each asset's latest: the last second's")
        #expect(worker.counters.positionsConflated == 200 * 599)
        #expect(worker.counters.delivered == 320)

        // Then the new ones.
        now.withLock { $0 = Self.start + .seconds(600) }
        publisher.publish(assets.prefix(3).map { Self.position($0, x: 600, at: Self.start + .seconds(600)) })
        try eventually("the new positions sent") { receiver.taken.withLock { $0.count } == 323 }
        taken = receiver.taken.withLock { $0 }
        #expect(taken.suffix(3).allSatisfy { $0.body.contains("\"x\":600") })
    }

    /// A position older than the output's `max_age` is let go unsent, counted; an alert of
    /// that age becomes a dead letter as before.
    @Test func aPositionPastMaxAgeIsLetGo() throws {
        let (store, now, receiver, worker, publisher) = try Self.output(events: ["asset.*"], maxAge: .minutes(1))
        Thread { worker.run() }.start()
        defer {
            worker.stop()
            worker.waitUntilFinished()
        }
        publisher.publish([Self.position("cart", x: 1, at: Self.start)])
        #expect(worker.counters.positionsWaiting == 1)
        now.withLock { $0 = Self.start + .seconds(61) }
        worker.retryNow()
        try eventually("let go") { worker.counters.positionsWaiting == 0 }
        #expect(worker.counters.positionsConflated == 1 && receiver.taken.withLock { $0 }.isEmpty)
    }
}
