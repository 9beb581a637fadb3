import BeaconCore
import Foundation
import TestSupport
import Testing

@testable import Storage

/// Another process holding the file's write lock, as an operator's `sqlite3` shell with a
/// transaction open does: the engine's writes give up at once (their callers hold what they
/// carried), and the writes that cannot be held wait for the lock.
@Suite(.serialized) struct LockedStoreTests {
    /// Holds `BEGIN EXCLUSIVE` on the file for `argv[2]` seconds.
    static let holdLock = """
        import sqlite3, sys, time
        c = sqlite3.connect(sys.argv[1], isolation_level=None)
        c.execute("BEGIN EXCLUSIVE")
        print("locked", flush=True)
        time.sleep(float(sys.argv[2]))
        c.execute("ROLLBACK")
        """

    /// Starts a process holding the lock on `store`'s file for `seconds`, once it holds it.
    static func lock(_ store: StateStore, for seconds: Double) throws -> Process {
        let lock = Process()
        lock.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        lock.arguments = ["-c", holdLock, store.path, "\(seconds)"]
        let output = Pipe()
        lock.standardOutput = output
        try lock.run()
        let said = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        try #require(said.hasPrefix("locked"), "\(said)")
        return lock
    }

    @Test func anEngineWriteGivesUpOnTheLockAtOnceAndSaysWhy() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        let lock = try Self.lock(store, for: 3)
        defer { lock.waitUntilExit() }
        let started = Date()
        let event = StateStore.StoredEvent(
            id: "e1", type: "beacond.region.enter", time: Timestamp(nanoseconds: 1), body: "{}")
        let error = #expect(throws: SQLiteError.self) { try store.append([event]) }
        let waited = Date().timeIntervalSince(started)
        #expect(waited < 1.5, "waited \(waited) s")
        #expect(error?.isBusy == true)
        #expect(error.map { store.remedy(for: $0) }?.contains("another process holds") == true)
        lock.waitUntilExit()
        try store.append([event])
        #expect(try store.events(limit: 10).map(\.id) == ["e1"])
    }

    @Test func anAPIChangeWaitsForTheLockAndIsSaved() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        let lock = try Self.lock(store, for: 1.5)
        defer { lock.waitUntilExit() }
        try store.saveAlarmFlag("night", active: false)
        try store.saveOverride(.remove(client: "app", region: "till"))
        #expect(try store.loadAlarmFlags() == ["night": false])
        #expect(try store.loadOverrides() == [.remove(client: "app", region: "till")])
    }
}
