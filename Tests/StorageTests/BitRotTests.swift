import BeaconCore
import Foundation
import Simulation
import TestSupport
import Testing

@testable import Storage

/// Real bit rot: pages of a closed state file overwritten with noise (a storage card's
/// failure), then the file opened as the daemon opens it and used as the daemon uses it.
/// Whatever the damage, nothing crashes, at most the first operations that meet it fail (the
/// file is emptied in place when a read or write meets the damage), from then on every
/// operation works, and damage nothing met is found by the check of the whole file
/// (`verify`): in the end the file is whole, emptied once.
@Suite struct BitRotTests {
    static let uuid = BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    static func regions(_ n: Int, at t: Int64) -> [RegionSnapshot] {
        (0..<n).map {
            RegionSnapshot(
                client: "app", spec: RegionSpec(id: "r\($0)", uuid: uuid), state: .inside, lastSeen: .seconds(t),
                enteredAt: .seconds(1), dwellsFired: 0)
        }
    }

    static func events(_ prefix: String, _ n: Int) -> [StateStore.StoredEvent] {
        (0..<n).map {
            .init(
                id: "\(prefix)\($0)", type: "beacond.region.enter", time: .seconds(1),
                body: "{\"id\":\"\(prefix)\($0)\",\"pad\":\"\(String(repeating: "x", count: 300))\"}")
        }
    }

    /// Overwrites `pages` random pages of the file with noise: never those of its schema
    /// (the first, with the header, and with small pages others too), whose damage makes the
    /// file unreadable at open — set aside, which the set-aside test covers.
    static func damage(_ path: String, pages: Int, random: inout SeededRandom) throws {
        let schema = Set(
            try SQLiteConnection(path: path).rows("SELECT pageno FROM dbstat WHERE name = 'sqlite_schema'") {
                $0.int(0)
            })
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        // The file's page size, from its header (bytes 16-17, big-endian).
        try handle.seek(toOffset: 16)
        let header = try #require(try handle.read(upToCount: 2))
        let pageSize = Int(header[header.startIndex]) << 8 | Int(header[header.startIndex + 1])
        let count = Int(size) / pageSize
        guard count > 1 else { return }
        for _ in 0..<pages {
            // Page numbers count from 1; `page` is the offset's, from 0.
            var page: Int
            repeat { page = 1 + Int(random.next() % UInt64(count - 1)) } while schema.contains(page + 1)
            try handle.seek(toOffset: UInt64(page * pageSize))
            handle.write(Data((0..<pageSize).map { _ in UInt8(truncatingIfNeeded: random.next()) }))
        }
    }

    @Test(arguments: 1...40) func aDamagedFileNeverCrashesAndWorksAgainAfterOneEmptying(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let dir = try Executables.temporaryDirectory().path
        do {
            let store = try StateStore(directory: dir)
            try store.saveRegions(Self.regions(30, at: 5))
            try store.saveOverride(.monitor(client: "app", region: RegionSpec(id: "added", uuid: Self.uuid)))
            try store.saveAlarmFlag("night", active: false)
            for batch in 0..<20 { try store.append(Self.events("a\(batch)-", 20), webhooks: { _ in ["crm"] }) }
        }
        // The writer's last connection checkpointed the WAL into the file on close.
        try Self.damage(dir + "/beacond.sqlite", pages: 1 + Int(random.next() % 4), random: &random)

        let (store, _) = try StateStore.open(directory: dir, setAsideSuffix: "\(seed)")
        store.recoverWhenCorrupt(copySuffix: { "rot" }, report: { _ in })
        // The daemon's round: each operation once, in turn; the damage may make the first
        // ones fail, and must not make any fail after the file has been emptied.
        let operations: [(String, () throws -> Void)] = [
            ("append", { try store.append(Self.events("b", 3), webhooks: { _ in ["crm"] }) }),
            ("pending", { _ = try store.pending(webhook: "crm", limit: 50) }),
            ("events", { _ = try store.events(limit: 500) }),
            ("saveRegions", { try store.saveRegions(Self.regions(30, at: 9)) }),
            ("loadRegions", { _ = try store.loadRegions() }),
            ("overrides", { _ = try store.loadOverrides() }),
            ("alarms", { _ = try store.loadAlarmFlags() }),
            ("depths", { _ = try store.outboxDepths() }),
            (
                "delivered",
                {
                    if let last = try store.pending(webhook: "crm", limit: 5).last {
                        try store.delivered(webhook: "crm", through: last.seq)
                    }
                }
            ),
        ]
        var failures: [String] = []
        for round in 0..<3 {
            for (name, operation) in operations {
                do {
                    try operation()
                } catch {
                    failures.append("round \(round) \(name): \(error)")
                }
            }
        }
        let lateFailures = failures.filter { !$0.hasPrefix("round 0") }
        #expect(lateFailures.isEmpty, "\(failures)")
        try store.append(Self.events("c", 1))
        #expect(try store.events(limit: 100_000).last?.id == "c0")
        #expect(try store.loadRegions().snapshots.count == 30)
        // Damage in pages none of that read or wrote (old history, free pages) is what the
        // daemon's check of the whole file finds.
        let emptiedBefore = store.timesEmptied
        #expect(store.verify() == (emptiedBefore > 0 ? .whole : .emptied))
        let check = try SQLiteConnection(path: store.path).rows("PRAGMA integrity_check") { $0.string(0) }
        #expect(check == ["ok"], "seed \(seed), emptied \(store.timesEmptied) time(s), failures: \(failures)")
        #expect(store.timesEmptied == 1, "the damage found once, by the round or by the check")
        #expect(try store.loadRegions().snapshots.count == 30)
    }
}
