import BeaconCore
import Foundation
import Logs
import Storage
import Synchronization
import TestSupport
import Testing

@testable import Publishing

/// Issue 53: positions alone are written at most once a second (`EventPublisher.groupWindow`),
/// with the next ones or at once before the next alert, in order; an alert is never held back.
@Suite struct GroupedWritesTests {
    static let start = Timestamp.seconds(1_763_805_600)

    static func position(_ asset: String, at t: Timestamp) -> Event {
        Event(
            time: t,
            payload: .assetPosition(
                AssetFix(asset: asset, position: Point(x: 1, y: 2), level: 0, accuracy: 1, zones: [], receivers: [])))
    }

    static func enter(at t: Timestamp) -> Event {
        Event(
            time: t,
            payload: .zone(
                ZoneAlert(alarm: "a", asset: "cart", zone: "dock", condition: .enter, position: nil, level: nil)))
    }

    @Test func positionsWaitASecondAndAnAlertTakesThemAlongInOrder() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        let now = Mutex(Self.start)
        let publisher = EventPublisher(
            gateway: "gw", store: store, workers: [], echo: false, clock: { now.withLock { $0 } }, logger: .silent)
        let told = Mutex<[String]>([])
        publisher.addListener { batch, _ in told.withLock { $0 += batch.map(\.type) } }
        let types = { try store.events().map(\.type) }

        publisher.publish([Self.position("cart", at: Self.start)])
        now.withLock { $0 = Self.start + .milliseconds(400) }
        publisher.publish([Self.position("pallet", at: Self.start + .milliseconds(400))])
        publisher.retryHeld()
        #expect(try types().isEmpty && told.withLock { $0 }.isEmpty, "written before the second was up")
        // The engine's next turn past the second writes them, together.
        now.withLock { $0 = Self.start + .milliseconds(1_100) }
        publisher.retryHeld()
        #expect(try types() == ["beacond.asset.position", "beacond.asset.position"])
        #expect(told.withLock { $0 }.count == 2)

        // An alert is written at once, after the position held before it.
        publisher.publish([Self.position("cart", at: Self.start + .milliseconds(1_200))])
        publisher.publish([Self.enter(at: Self.start + .milliseconds(1_300))])
        #expect(try types().suffix(2) == ["beacond.asset.position", "beacond.zone.enter"])
        // At the stop, what is held is written at once.
        publisher.publish([Self.position("pallet", at: Self.start + .milliseconds(1_400))])
        publisher.retryHeld(now: true)
        #expect(try types().count == 5)
    }
}
