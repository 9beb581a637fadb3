import BeaconConfig
import BeaconCore
import Foundation
import Logs
import Publishing
import Storage
import TestSupport
import Testing

@testable import beacond

/// The services around the state store, in process: what the disk could not take gets its
/// last try at the stop, and a reload's `history:` reaches the store.
@Suite struct StoreServiceTests {
    static let start = Timestamp.seconds(1_763_805_600)

    static func event(_ id: String, _ second: Int64) -> StateStore.StoredEvent {
        StateStore.StoredEvent(
            id: id, type: "beacond.zone.enter", time: start + .seconds(second), body: #"{"id":"\#(id)"}"#)
    }

    @Test func eventsHeldForTheDiskAreStoredAtTheStop() throws {
        let directory = try Executables.temporaryDirectory().path
        let store = try StateStore(directory: directory)
        let publisher = EventPublisher(
            gateway: "gw", store: store, workers: [], echo: false, clock: { Self.start }, logger: .silent)
        publisher.adoptHeld([Self.event("01HELD1", 1), Self.event("01HELD2", 2)])
        let flush = HeldEventsFlush(
            publisher: publisher, keep: UnsavedKeep(directory: directory + "/keep", logger: .silent), logger: .silent)
        try flush.start()
        #expect(try store.events().isEmpty)
        flush.stop()
        #expect(try store.events().map(\.id) == ["01HELD1", "01HELD2"])
        #expect(publisher.held.events == 0)
    }

    @Test func aReloadsHistoryLimitsReachTheStoreAtItsNextWrite() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        try store.append((1...150).map { Self.event(String(format: "01E%03d", $0), Int64($0)) })
        let old = try ConfigLoader.load(yaml: "gateway: {id: gw1}\n", file: "beacond.yaml")
        let new = try ConfigLoader.load(
            yaml: "gateway: {id: gw1}\nhistory: {alerts: {max_events: 100}}\n", file: "beacond.yaml")
        let verifier = StateVerifier(store: store, logger: .silent)
        #expect(verifier.apply(ConfigReload(from: old, to: new), from: old)["history"]?.description == "changed")
        #expect(try store.events(limit: 1_000).count == 150, "applied from the next write on")
        try store.append([Self.event("01E151", 151)])
        let kept = try store.events(limit: 1_000).map(\.id)
        #expect(kept.count == 100 && kept.last == "01E151")
    }
}
