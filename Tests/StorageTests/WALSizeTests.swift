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
}
