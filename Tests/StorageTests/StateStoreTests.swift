import BeaconCore
import Foundation
import Storage
import TestSupport
import Testing

/// The state store on a real SQLite file in a temporary directory.
@Suite struct StateStoreTests {
    static let uuid = BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    @Test func regionStatesRoundTripThroughTheFile() throws {
        let dir = try Executables.temporaryDirectory().path
        let snapshots = [
            RegionSnapshot(
                client: "app", spec: RegionSpec(id: "store", uuid: Self.uuid, dwell: [.minutes(2)]), state: .inside,
                lastSeen: Timestamp(nanoseconds: 1_000_000_123), enteredAt: Timestamp(nanoseconds: 5), dwellsFired: 1),
            RegionSnapshot(
                client: "app", spec: RegionSpec(id: "till", uuid: Self.uuid, major: 42, minor: 9, notifyOnExit: false),
                state: .outside, lastSeen: Timestamp(nanoseconds: 7), enteredAt: Timestamp(nanoseconds: 7),
                dwellsFired: 0),
        ]
        try StateStore(directory: dir).saveRegions(snapshots)
        // A new store on the same file, as after a restart
        let loaded = try StateStore(directory: dir).loadRegions()
        #expect(loaded.snapshots == snapshots && loaded.skipped == 0)
        // Saving again replaces, never duplicates
        try StateStore(directory: dir).saveRegions(Array(snapshots.prefix(1)))
        #expect(try StateStore(directory: dir).loadRegions().snapshots == Array(snapshots.prefix(1)))
    }

    @Test func eventHistoryKeepsTheNewestAndPagesAfterAnId() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path, historyLimit: 5)
        let events = (1...8).map {
            StateStore.StoredEvent(
                id: "ID\($0)", type: "beacond.region.enter", time: Timestamp(nanoseconds: Int64($0)), body: "{}")
        }
        try store.append(Array(events[0..<4]))
        try store.append(Array(events[4...]))
        try store.append([events[7]])  // a duplicate id is stored once
        #expect(try store.events().map(\.id) == ["ID4", "ID5", "ID6", "ID7", "ID8"])
        #expect(try store.events(after: "ID6").map(\.id) == ["ID7", "ID8"])
    }
}
