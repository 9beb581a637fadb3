import BeaconCore
import Foundation
import TestSupport
import Testing

@testable import Storage

/// Another process holding the file's write lock, as an operator's `sqlite3` shell with a
/// transaction open does: the engine's writes give up at once (their callers hold what they
/// carried), and the writes that cannot be held wait for the lock.
@Suite(.serialized) struct LockedStoreTests {
    @Test func anEngineWriteGivesUpOnTheLockAtOnceAndSaysWhy() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        let lock = try StateFileLock(path: store.path)
        defer { lock.release() }
        let started = Date()
        let event = StateStore.StoredEvent(
            id: "e1", type: "beacond.region.enter", time: Timestamp(nanoseconds: 1), body: "{}")
        let error = #expect(throws: SQLiteError.self) { try store.append([event]) }
        let waited = Date().timeIntervalSince(started)
        #expect(waited < 1.5, "waited \(waited) s")
        #expect(error?.isBusy == true)
        #expect(error.map { store.remedy(for: $0) }?.contains("another process holds") == true)
        lock.release()
        try store.append([event])
        #expect(try store.events(limit: 10).map(\.id) == ["e1"])
    }

    @Test func anAPIChangeWaitsForTheLockAndIsSaved() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        let lock = try StateFileLock(path: store.path)
        defer { lock.release() }
        DispatchQueue.global().asyncAfter(deadline: .now() + 1.5) { lock.release() }
        try store.saveAlarmFlag("night", active: false)
        try store.saveOverride(.remove(client: "app", region: "till"))
        #expect(try store.loadAlarmFlags() == ["night": false])
        #expect(try store.loadOverrides() == [.remove(client: "app", region: "till")])
    }
}
