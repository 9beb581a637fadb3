import BeaconCore
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Storage

/// A state file that is not a database any more (an SD card's failure): set aside and a new
/// store started, so the daemon keeps its webhooks and states from then on.
@Suite struct CorruptStoreTests {
    static func event(_ id: String) -> StateStore.StoredEvent {
        .init(id: id, type: "beacond.region.enter", time: .seconds(1), body: "{\"id\":\"\(id)\"}")
    }

    @Test func aFileThatIsNotADatabaseIsSetAsideAndANewStoreStarted() throws {
        let dir = try Executables.temporaryDirectory()
        let file = dir.appendingPathComponent("beacond.sqlite").path
        let garbage = Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) })
        try garbage.write(to: URL(fileURLWithPath: file))
        #expect(throws: SQLiteError.self) { try StateStore(directory: dir.path) }

        let (store, aside) = try StateStore.open(directory: dir.path, setAsideSuffix: "1763924040")
        #expect(aside == file + ".corrupt-1763924040")
        #expect(FileManager.default.contents(atPath: file + ".corrupt-1763924040") == garbage, "kept as it was")
        try store.append([Self.event("e1")], webhooks: { _ in ["crm"] })
        #expect(try store.events().map(\.id) == ["e1"])
        #expect(try store.pending(webhook: "crm", limit: 10).count == 1)
    }

    @Test func aGoodFileIsOpenedAsItIs() throws {
        let dir = try Executables.temporaryDirectory().path
        try StateStore(directory: dir).append([Self.event("e1")])
        let (store, aside) = try StateStore.open(directory: dir, setAsideSuffix: "x")
        #expect(aside == nil)
        #expect(try store.events().map(\.id) == ["e1"])
    }

    /// Damages a live file as a failing SD card would, from a second connection: the history's
    /// table is pointed at an index's page, so that SQLite finds it malformed on the next write
    /// of an event (SQLITE_CORRUPT), while the other tables still read.
    static func corruptHistory(_ path: String) throws { try corrupt(path, table: "event") }

    /// `table` pointed at an index's page, so that the next write to it finds it malformed.
    static func corrupt(_ path: String, table: String) throws {
        let other = try SQLiteConnection(path: path)
        let version = try other.scalarInt64("PRAGMA schema_version") ?? 0
        try other.execute("PRAGMA writable_schema = ON")
        try other.execute(
            """
            UPDATE sqlite_master SET rootpage = (SELECT rootpage FROM sqlite_master WHERE name = 'outbox_by_age')
            WHERE name = ?
            """, [table])
        try other.execute("PRAGMA schema_version = \(version + 1)")
    }

    @Test func aFileFoundCorruptWhileRunningIsEmptiedInPlaceKeepingWhatCanBeRead() throws {
        let dir = try Executables.temporaryDirectory().path
        let store = try StateStore(directory: dir)
        let reports = Mutex<[SQLiteDatabase.Report]>([])
        store.recoverWhenCorrupt(copySuffix: { "1763924040" }, report: { r in reports.withLock { $0.append(r) } })
        let uuid = BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        let region = RegionSnapshot(
            client: "app", spec: RegionSpec(id: "store", uuid: uuid), state: .inside, lastSeen: .seconds(9),
            enteredAt: .seconds(5), dwellsFired: 0)
        try store.saveRegions([region])
        try store.saveOverride(.monitor(client: "app", region: RegionSpec(id: "added", uuid: uuid)))
        try store.saveAlarmFlag("night", active: false)
        try store.append([Self.event("e1"), Self.event("e2")], webhooks: { _ in ["crm"] })
        let pendingBefore = try store.pending(webhook: "crm", limit: 10)
        try Self.corruptHistory(store.path)

        // The write that finds the damage is done again on the emptied file, not lost.
        try store.append([Self.event("e3")], webhooks: { _ in ["crm"] })

        let report = try #require(reports.withLock { $0 }.first)
        #expect(report.error.isCorruption)
        #expect(try report.copy?.get() == store.path + ".corrupt-1763924040")
        #expect(FileManager.default.fileExists(atPath: store.path + ".corrupt-1763924040"))
        #expect(
            Set(report.carried).isSuperset(of: ["api_region", "alarm_flag", "region_state", "outbox", "event_body"]))
        #expect(try store.events().map(\.id) == ["e3"], "the history went with the damage")
        #expect(try store.loadOverrides() == [.monitor(client: "app", region: RegionSpec(id: "added", uuid: uuid))])
        #expect(try store.loadAlarmFlags() == ["night": false])
        #expect(try store.loadRegions().snapshots == [region])
        let pending = try store.pending(webhook: "crm", limit: 10)
        #expect(pending.map(\.eventID) == ["e1", "e2", "e3"], "the backlog is carried")
        #expect(pending.map(\.body) == ["e1", "e2", "e3"].map { Self.event($0).body })
        #expect(pending.last!.seq > pendingBefore.last!.seq, "sequence numbers go on from the old file's")
        let bodies = try SQLiteConnection(path: store.path).scalarInt64("SELECT COUNT(*) FROM event_body")
        #expect(bodies == 3, "the backlog's bodies and e3's, not the history's")
        let check = try SQLiteConnection(path: store.path).rows("PRAGMA integrity_check") { $0.string(0) }
        #expect(check == ["ok"])
    }

    /// Damage to the bodies the outbox points at (issue 61, H1): the emptying carried the
    /// backlog's rows but could not read their bodies. Before, each was read as an empty
    /// string and sent as `[,,…]`, which a strict receiver refuses — holding every later
    /// alert behind it — and expiry could not move them (a NULL body in `dead_letter`).
    @Test func aBacklogWhoseBodiesWereLostIsDeadLetteredNotSentEmpty() throws {
        let dir = try Executables.temporaryDirectory().path
        let store = try StateStore(directory: dir)
        let reports = Mutex<[SQLiteDatabase.Report]>([])
        store.recoverWhenCorrupt(copySuffix: { "1" }, report: { r in reports.withLock { $0.append(r) } })
        try store.append([Self.event("e1"), Self.event("e2")], webhooks: { _ in ["crm", "erp"] })
        try Self.corrupt(store.path, table: "event_body")

        try store.append([Self.event("e3")], webhooks: { _ in ["crm", "erp"] })

        let report = try #require(reports.withLock { $0 }.first)
        #expect(report.lost.contains("event_body") && report.carried.contains("outbox"))
        let pending = try store.pending(webhook: "crm", limit: 10)
        #expect(pending.map(\.eventID) == ["e1", "e2", "e3"])
        #expect(pending.map(\.bodyLost) == [true, true, false], "never an empty body taken for an event")
        #expect(pending.last?.body == Self.event("e3").body)
        #expect(try store.ownEntries(excluding: []).map(\.id) == ["e3"], "a hand-over tells only what it can")

        #expect(try store.deadLetterLostBodies(webhook: "crm", at: .seconds(60)) == 2)
        #expect(try store.pending(webhook: "crm", limit: 10).map(\.eventID) == ["e3"])
        let letters = try store.deadLetters()
        #expect(letters.map(\.eventID) == ["e2", "e1"])
        #expect(letters.allSatisfy { $0.reason == StateStore.bodyLostReason && $0.diedAt == .seconds(60) })
        // Expiry moves an entry whose body was lost too (before: NOT NULL failed, every second).
        #expect(
            try store.expire(webhook: "erp", enqueuedBefore: .seconds(1_000), at: .seconds(61), reason: "max_age") == 3)
    }

    /// A card that fails again and again would fill the disk with copies: one is kept until
    /// someone deletes it.
    @Test func aSecondDamageMakesNoSecondCopyWhileTheFirstIsThere() throws {
        let dir = try Executables.temporaryDirectory().path
        let store = try StateStore(directory: dir)
        let reports = Mutex<[SQLiteDatabase.Report]>([])
        let suffix = Mutex(0)
        store.recoverWhenCorrupt(
            copySuffix: {
                suffix.withLock {
                    $0 += 1; return "\($0)"
                }
            },
            report: { r in reports.withLock { $0.append(r) } })
        for round in 1...2 {
            try Self.corruptHistory(store.path)
            try store.append([Self.event("e\(round)")])
        }
        let copies = reports.withLock { $0 }.map(\.copy)
        #expect(copies.count == 2)
        #expect(try copies.first??.get() == store.path + ".corrupt-1")
        guard case let .failure(error)?? = copies.last else {
            Issue.record("a second copy was made: \(copies)")
            return
        }
        #expect(error.reason.contains("beacond.sqlite.corrupt-1 is still there"))
        let names = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.contains(".corrupt-") }
        #expect(names.filter { !$0.hasSuffix("-wal") } == ["beacond.sqlite.corrupt-1"])
    }

    @Test func regionsAreAllWrittenAgainAfterTheFileWasEmptied() throws {
        let dir = try Executables.temporaryDirectory().path
        let store = try StateStore(directory: dir)
        store.recoverWhenCorrupt(copySuffix: { "x" }, report: { _ in })
        let uuid = BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        let regions = ["a", "b"].map {
            RegionSnapshot(
                client: "app", spec: RegionSpec(id: $0, uuid: uuid), state: .inside, lastSeen: .seconds(9),
                enteredAt: .seconds(5), dwellsFired: 0)
        }
        try store.saveRegions(regions)
        try Self.corruptHistory(store.path)
        try store.append([Self.event("e1")])
        // A region table that could not be carried (here: dropped) is rebuilt from memory by
        // the next save, even with nothing changed since the last.
        try SQLiteConnection(path: store.path).execute("DELETE FROM region_state")
        try store.saveRegions(regions)
        #expect(try store.loadRegions().snapshots.map(\.spec.id).sorted() == ["a", "b"])
    }

    @Test func aReadThatMeetsTheDamageEmptiesTheFileToo() throws {
        let dir = try Executables.temporaryDirectory().path
        let store = try StateStore(directory: dir)
        let reports = Mutex(0)
        store.recoverWhenCorrupt(copySuffix: { "r" }, report: { _ in reports.withLock { $0 += 1 } })
        try store.append([Self.event("e1")])
        try Self.corruptHistory(store.path)
        #expect(try store.events().isEmpty, "read again on the emptied file")
        #expect(reports.withLock { $0 } == 1)
        try store.append([Self.event("e2")])
        #expect(try store.events().map(\.id) == ["e2"])
        #expect(reports.withLock { $0 } == 1, "emptied once")
    }

    /// The API's and webhooks' readers go on reading on their own threads while the file is
    /// found corrupt and emptied: none of them keeps reading the old tables' pages, and the
    /// file ends up whole, emptied once.
    @Test func readersOnOtherThreadsCarryOnAcrossTheEmptying() throws {
        let dir = try Executables.temporaryDirectory().path
        let store = try StateStore(directory: dir)
        let reports = Mutex(0)
        store.recoverWhenCorrupt(copySuffix: { "t" }, report: { _ in reports.withLock { $0 += 1 } })
        try store.append((1...50).map { Self.event("a\($0)") }, webhooks: { _ in ["crm"] })
        let stop = Atomic(false)
        let failures = Mutex<[String]>([])
        let readers = (0..<3).map { _ in
            Thread {
                while !stop.load(ordering: .relaxed) {
                    do {
                        _ = try store.events(limit: 100)
                        _ = try store.pending(webhook: "crm", limit: 100)
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        readers.forEach { $0.start() }
        try Self.corruptHistory(store.path)
        for i in 1...20 { try store.append([Self.event("b\(i)")], webhooks: { _ in ["crm"] }) }
        stop.store(true, ordering: .relaxed)
        while readers.contains(where: \.isExecuting) { usleep(1000) }
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(reports.withLock { $0 } == 1)
        #expect(try store.events(limit: 100).map(\.id) == (1...20).map { "b\($0)" })
        #expect(try store.pending(webhook: "crm", limit: 100).count == 70, "the backlog carried, and the new ones")
        let check = try SQLiteConnection(path: store.path).rows("PRAGMA integrity_check") { $0.string(0) }
        #expect(check == ["ok"])
    }
}
