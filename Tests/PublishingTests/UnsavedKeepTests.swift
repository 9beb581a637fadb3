import BeaconCore
import Foundation
import Logs
import Publishing
import Storage
import Synchronization
import TestSupport
import Testing

/// The copy, outside a full disk, of what the state store cannot take (`UnsavedKeep`), on
/// real SQLite files: it mirrors the hold, is taken over by the next run, and is removed once
/// the state store has taken everything in it.
@Suite struct UnsavedKeepTests {
    static func event(_ n: Int) -> StateStore.StoredEvent {
        .init(id: "E\(n)", type: "beacond.region.enter", time: .seconds(Int64(n)), body: "{\"n\":\(n)}")
    }

    static let snapshot = EngineSnapshot(
        regions: [
            RegionSnapshot(
                client: "app", spec: RegionSpec(id: "door", uuid: BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!),
                state: .inside, lastSeen: .seconds(7), enteredAt: .seconds(5), dwellsFired: 0)
        ], assets: [])

    static func keep() throws -> (UnsavedKeep, String, CapturedLog) {
        let dir = try Executables.temporaryDirectory().appendingPathComponent("unsaved").path
        let log = CapturedLog()
        return (UnsavedKeep(directory: dir, logger: log.logger), dir, log)
    }

    @Test func theNextRunTakesOverWhatWasHeldWithoutWhatTheBoundDropped() throws {
        let (keep, dir, _) = try Self.keep()
        keep.held([Self.event(1), Self.event(2)], dropped: [])
        keep.held([Self.event(3)], dropped: ["E1"])
        keep.statesUnsaved(Self.snapshot)
        #expect(keep.isWhole)

        let logs = CapturedLog()
        let next = UnsavedKeep(directory: dir, logger: logs.logger)
        let taken = try #require(next.takeOver())
        #expect(taken.events.map(\.id) == ["E2", "E3"])
        #expect(taken.state?.regions == Self.snapshot.regions)
        #expect(logs.all.hasLog("state.unsaved_found", level: "info", ["events": "2", "regions": "1"]), "\(logs.all)")
    }

    @Test func itIsRemovedOnlyOnceTheStoreHasTakenEventsAndStates() throws {
        let (keep, dir, _) = try Self.keep()
        let file = dir + "/beacond.sqlite"
        keep.held([Self.event(1)], dropped: [])
        keep.statesUnsaved(Self.snapshot)
        keep.statesSaved()
        #expect(FileManager.default.fileExists(atPath: file), "the events are still only here")
        let afterStates = try #require(UnsavedKeep(directory: dir, logger: .silent).takeOver())
        #expect(afterStates.events.map(\.id) == ["E1"])
        #expect(afterStates.state == nil, "states the store saved are not taken back over newer ones")
        keep.eventsStored()
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(!FileManager.default.fileExists(atPath: dir))
        #expect(UnsavedKeep(directory: dir, logger: .silent).takeOver() == nil)
    }

    /// Every asset out of its zones is a state to keep too: the next run must not take the
    /// state store's older memberships for it.
    @Test func statesThatAreEmptyAreKeptAsStates() throws {
        let (keep, dir, _) = try Self.keep()
        keep.held([Self.event(1)], dropped: [])
        keep.statesUnsaved(EngineSnapshot(regions: [], assets: []))
        let taken = try #require(UnsavedKeep(directory: dir, logger: .silent).takeOver())
        #expect(taken.state.map { $0.regions.isEmpty && $0.assets.isEmpty } == true, "kept, and empty")

        keep.statesSaved()
        #expect(UnsavedKeep(directory: dir, logger: .silent).takeOver()?.state == nil)
    }

    @Test func aKeepThatCannotBeWrittenIsToldOnceAndIsNotWhole() throws {
        let (keep, dir, logs) = try Self.keep()
        #expect(FileManager.default.createFile(atPath: dir, contents: Data()), "a file where the directory goes")
        keep.held([Self.event(1)], dropped: [])
        keep.held([Self.event(2)], dropped: [])
        #expect(!keep.isWhole)
        #expect(logs.all.filter { $0.contains("state.unsaved_not_kept") }.count == 1)
    }

    @Test func anUnreadableKeepIsToldAndRemoved() throws {
        let (keep, dir, logs) = try Self.keep()
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Data(repeating: 0xA5, count: 8_192).write(to: URL(fileURLWithPath: dir + "/beacond.sqlite"))
        #expect(keep.takeOver() == nil)
        #expect(logs.all.contains { $0.contains("state.unsaved_unreadable") })
        #expect(!FileManager.default.fileExists(atPath: dir + "/beacond.sqlite"))
        keep.held([Self.event(1)], dropped: [])
        #expect(keep.isWhole, "a new keep in its place")
    }

    /// A reboot while the disk is full empties the runtime directory: the state directory's
    /// reserve still has the alerts (positions are superseded and not kept there) and the
    /// states, and the next run takes them over. Once the store has them, the reserve is empty.
    @Test func aRebootLeavesTheAlertsAndTheStatesInTheReserve() throws {
        let (_, dir, _) = try Self.keep()
        let reservePath = dir + ".reserve"
        let position = StateStore.StoredEvent(
            id: "E2", type: "beacond.asset.position", time: .seconds(2), body: "{}")
        let before = UnsavedKeep(directory: dir, reserve: try DiskReserve(path: reservePath), logger: .silent)
        before.held([Self.event(1), position, Self.event(3)], dropped: [])
        before.statesUnsaved(Self.snapshot)
        try FileManager.default.removeItem(atPath: dir)

        let logs = CapturedLog()
        let after = UnsavedKeep(directory: dir, reserve: try DiskReserve(path: reservePath), logger: logs.logger)
        let taken = try #require(after.takeOver())
        #expect(taken.events.map(\.id) == ["E1", "E3"])
        #expect(taken.state?.regions == Self.snapshot.regions)
        #expect(
            logs.all.hasLog(
                "state.reserve_found", level: "info", ["events": "2", "not_in_runtime_copy": "2", "regions": "1"]),
            "\(logs.all)")
        after.eventsStored()
        after.statesSaved()
        let emptied = UnsavedKeep(directory: dir, reserve: try DiskReserve(path: reservePath), logger: .silent)
        #expect(emptied.takeOver() == nil)
    }

    /// Without a reboot both the runtime copy and the reserve have the alerts: each is taken
    /// once, in order, and the copy's states (newer or the same) are the ones taken.
    @Test func theCopyAndTheReserveTogetherGiveEachEventOnce() throws {
        let (_, dir, _) = try Self.keep()
        let reservePath = dir + ".reserve"
        let before = UnsavedKeep(directory: dir, reserve: try DiskReserve(path: reservePath), logger: .silent)
        before.held([Self.event(1), Self.event(2)], dropped: [])
        before.statesUnsaved(Self.snapshot)
        before.held([Self.event(3)], dropped: [])

        let logs = CapturedLog()
        let after = UnsavedKeep(directory: dir, reserve: try DiskReserve(path: reservePath), logger: logs.logger)
        let taken = try #require(after.takeOver())
        #expect(taken.events.map(\.id) == ["E1", "E2", "E3"])
        #expect(taken.state?.regions == Self.snapshot.regions)
        #expect(!logs.all.contains { $0.contains("state.reserve_found") }, "nothing the copy lacked")
    }

    /// The store takes everything while the runtime copy exists (the usual end of a full
    /// disk, without a restart): the copy is removed and the reserve emptied, and the next
    /// time the disk fills the reserve takes alerts again. Found by bench/chaos.py: removing
    /// the copy forgot the reserve, whose older states the next start then restored over the
    /// store's (a second enter or exit).
    @Test func theReserveIsEmptiedWithTheCopyAndServesTheNextFullDisk() throws {
        let (_, dir, _) = try Self.keep()
        let reservePath = dir + ".reserve"
        let keep = UnsavedKeep(directory: dir, reserve: try DiskReserve(path: reservePath), logger: .silent)
        keep.held([Self.event(1)], dropped: [])
        keep.statesUnsaved(Self.snapshot)
        keep.eventsStored()
        keep.statesSaved()
        #expect(!FileManager.default.fileExists(atPath: dir), "the copy is removed")
        var reserve = try DiskReserve(path: reservePath)
        let emptied = reserve.read()
        #expect(emptied.events.isEmpty && emptied.states == nil, "and the reserve emptied")
        #expect(keep.reserveStatus?.alerts == 0)

        keep.held([Self.event(2)], dropped: [])
        #expect(keep.reserveStatus?.alerts == 1)
        try FileManager.default.removeItem(atPath: dir)
        let taken = UnsavedKeep(directory: dir, reserve: try DiskReserve(path: reservePath), logger: .silent).takeOver()
        #expect(taken?.events.map(\.id) == ["E2"])
    }
}
