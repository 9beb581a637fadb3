import BeaconCore
import Foundation
import Logs
import Storage
import Synchronization
import TestSupport
import Testing

@testable import Publishing

/// Issue 53: measurements alone (ranging, proximity) are written at most once a second
/// (`EventPublisher.groupWindow`), with the next ones or at once before the next alert, in
/// order; an alert is never held back; a position is never written, and is told at once unless
/// a held measurement is before it.
@Suite struct GroupedWritesTests {
    static let start = Timestamp.seconds(1_763_805_600)

    static func position(_ asset: String, at t: Timestamp) -> Event {
        Event(
            time: t,
            payload: .assetPosition(
                AssetFix(asset: asset, position: Point(x: 1, y: 2), level: 0, accuracy: 1, zones: [], receivers: [])))
    }

    static func ranging(at t: Timestamp) -> Event {
        Event(time: t, payload: .ranging(client: "c", region: "r", beacons: []))
    }

    static func enter(at t: Timestamp) -> Event {
        Event(
            time: t,
            payload: .zone(
                ZoneAlert(alarm: "a", asset: "cart", zone: "dock", condition: .enter, position: nil, level: nil)))
    }

    /// The types the file holds, without the positions the history keeps in memory.
    static func storedTypes(_ store: StateStore) throws -> [String] {
        try SQLiteDatabase(path: store.path, migrations: []).read { (db) throws(SQLiteError) in
            try db.rows("SELECT type FROM event ORDER BY seq") { $0.string(0) }
        }
    }

    @Test func measurementsWaitASecondAndAnAlertTakesThemAlongInOrder() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        let now = Mutex(Self.start)
        let publisher = EventPublisher(
            gateway: "gw", store: store, workers: [], echo: false, clock: { now.withLock { $0 } }, logger: .silent)
        let told = Mutex<[String]>([])
        publisher.addListener { batch, _ in told.withLock { $0 += batch.map(\.type) } }
        let types = { try store.events().map(\.type) }

        publisher.publish([Self.ranging(at: Self.start)])
        now.withLock { $0 = Self.start + .milliseconds(400) }
        publisher.publish([Self.ranging(at: Self.start + .milliseconds(400))])
        // A position behind a held measurement waits with it: everyone is told in order.
        publisher.publish([Self.position("cart", at: Self.start + .milliseconds(450))])
        publisher.retryHeld()
        #expect(try types().isEmpty && told.withLock { $0 }.isEmpty, "written before the second was up")
        // The engine's next turn past the second writes them, together.
        now.withLock { $0 = Self.start + .milliseconds(1_100) }
        publisher.retryHeld()
        #expect(try types() == ["beacond.ranging", "beacond.ranging", "beacond.asset.position"])
        #expect(told.withLock { $0 } == ["beacond.ranging", "beacond.ranging", "beacond.asset.position"])
        #expect(try Self.storedTypes(store) == ["beacond.ranging", "beacond.ranging"], "a position is not written")

        // With nothing held, a position is told at once, and is not written.
        publisher.publish([Self.position("pallet", at: Self.start + .milliseconds(1_150))])
        #expect(told.withLock { $0 }.count == 4)
        // An alert is written at once, after the measurement held before it.
        publisher.publish([Self.ranging(at: Self.start + .milliseconds(1_200))])
        publisher.publish([Self.enter(at: Self.start + .milliseconds(1_300))])
        #expect(try Self.storedTypes(store).suffix(2) == ["beacond.ranging", "beacond.zone.enter"])
        // At the stop, what is held is written at once.
        publisher.publish([Self.ranging(at: Self.start + .milliseconds(1_400))])
        publisher.retryHeld(now: true)
        #expect(try Self.storedTypes(store).count == 5)
        #expect(try types().count == 7, "the history: five stored, two positions from memory, in order")
        #expect(try store.events().map(\.id) == store.events().map(\.id).sorted())
    }
}
