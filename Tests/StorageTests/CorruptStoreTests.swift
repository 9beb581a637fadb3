import BeaconCore
import Foundation
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
}
