import BeaconCore
import Foundation
import TestSupport
import Testing

@testable import Storage

/// The state file's write-ahead log grows while another process holds a read transaction open
/// (an operator's `sqlite3` shell, a backup tool), since nothing past that reader's snapshot
/// can be copied back. SQLite reuses a grown log but never gives its space back: without a
/// limit, one long read on a gateway's small card would keep the log at its largest for the
/// rest of the daemon's life.
@Suite(.serialized) struct WALSizeTests {
    /// Holds a read transaction on the file (`argv[1]`) until its standard input closes.
    static let holdRead = """
        import sqlite3, sys
        c = sqlite3.connect(sys.argv[1], isolation_level=None)
        c.execute("BEGIN")
        c.execute("SELECT count(*) FROM event").fetchone()
        print("reading", flush=True)
        sys.stdin.read()
        c.execute("COMMIT")
        """

    static func walBytes(_ store: StateStore) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: store.path + "-wal"))?[.size] as? Int) ?? 0
    }

    static func events(_ batch: Int, count: Int) -> [StateStore.StoredEvent] {
        (0..<count).map { i in
            StateStore.StoredEvent(
                id: "e\(batch)-\(i)", type: "beacond.asset.position", time: Timestamp(nanoseconds: Int64(batch)),
                body: String(repeating: "x", count: 1_000))
        }
    }

    @Test func aLogGrownUnderALongReadShrinksOnceTheReaderIsGone() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        try store.append(Self.events(0, count: 10))
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        reader.arguments = ["-c", Self.holdRead, store.path]
        let input = Pipe()
        let output = Pipe()
        reader.standardInput = input
        reader.standardOutput = output
        try reader.run()
        let said = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        try #require(said.hasPrefix("reading"), "\(said)")

        for batch in 1...20 { try store.append(Self.events(batch, count: 1_000)) }
        let grown = Self.walBytes(store)
        #expect(grown > 16 << 20, "the reader pinned the log: \(grown) bytes")

        try input.fileHandleForWriting.close()
        reader.waitUntilExit()
        for batch in 21...25 { try store.append(Self.events(batch, count: 1_000)) }
        let after = Self.walBytes(store)
        #expect(after <= SQLiteDatabase.walSizeLimit, "\(grown) bytes, then \(after)")
        #expect(try store.events(limit: 1).count == 1)
    }

    /// The page size in a file's header (bytes 16-17, big-endian).
    static func pageSize(_ path: String) throws -> Int {
        let bytes = try #require(FileManager.default.contents(atPath: path))
        return Int(bytes[16]) << 8 | Int(bytes[17])
    }

    /// A new state file has 1 KiB pages (a commit writes each page it touches whole, so small
    /// pages spare the card); a file made before keeps its own and works as it did.
    @Test func aNewFileHasSmallPagesAndAnOlderOneKeepsItsOwn() throws {
        let fresh = try Executables.temporaryDirectory().path
        let store = try StateStore(directory: fresh)
        try store.append(Self.events(0, count: 3))
        #expect(try Self.pageSize(store.path) == 1024)

        let older = try Executables.temporaryDirectory().path
        let made = try runCommand(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [
                "-c",
                "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('PRAGMA page_size = 4096'); "
                    + "c.execute('CREATE TABLE t (a)'); c.commit()", older + "/beacond.sqlite",
            ])
        try #require(made.status == 0, "\(made.stderr)")
        let reopened = try StateStore(directory: older)
        try reopened.append(Self.events(1, count: 3))
        #expect(try reopened.events(limit: 10).count == 3)
        #expect(try Self.pageSize(reopened.path) == 4096)
    }
}
