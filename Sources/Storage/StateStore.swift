import BeaconCore
import Foundation
import GRDB

/// beacond's SQLite file under `gateway.state_dir`: what must survive a restart or a power
/// cut — each region's state and last sighting (SPEC §3: no second enter after a restart,
/// exits dated from the last sighting), and the history of events published.
///
/// WAL mode with `synchronous = NORMAL`: a commit survives a crash of the daemon, and a
/// power cut loses at most the last commits before it, never the file's consistency.
/// Callers batch: one transaction per engine turn, never one per advertisement.
public final class StateStore: Sendable {
    private let db: DatabaseQueue
    public let path: String
    /// Events kept in the history; older ones are deleted as new ones arrive.
    public let historyLimit: Int

    public init(directory: String, historyLimit: Int = 100_000) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        path = (directory as NSString).appendingPathComponent("beacond.sqlite")
        self.historyLimit = historyLimit
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        db = try DatabaseQueue(path: path, configuration: configuration)
        try db.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = WAL") }
        try Self.migrator.migrate(db)
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: "region_state") { t in
                t.column("client", .text).notNull()
                t.column("region", .text).notNull()
                t.column("spec", .text).notNull()
                t.column("state", .text).notNull()
                t.column("last_seen_ns", .integer).notNull()
                t.column("entered_at_ns", .integer).notNull()
                t.column("dwells_fired", .integer).notNull()
                t.primaryKey(["client", "region"])
            }
            try db.create(table: "event") { t in
                t.column("seq", .integer).primaryKey(autoincrement: true)
                t.column("id", .text).notNull().unique()
                t.column("type", .text).notNull()
                t.column("time_ns", .integer).notNull()
                t.column("body", .text).notNull()
            }
        }
        return migrator
    }

    /// Replaces the saved region states with these (every monitored region).
    public func saveRegions(_ snapshots: [RegionSnapshot]) throws {
        try db.write { db in
            try db.execute(sql: "DELETE FROM region_state")
            let statement = try db.makeStatement(
                sql: """
                    INSERT INTO region_state (client, region, spec, state, last_seen_ns, entered_at_ns, dwells_fired)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """)
            for s in snapshots {
                try statement.execute(arguments: [
                    s.client, s.spec.id, s.spec.json.serialized, s.state.rawValue, s.lastSeen.nanoseconds,
                    s.enteredAt.nanoseconds, s.dwellsFired,
                ])
            }
        }
    }

    /// The saved region states. Rows that no longer parse are skipped (and reported).
    public func loadRegions() throws -> (snapshots: [RegionSnapshot], skipped: Int) {
        try db.read { db in
            var out: [RegionSnapshot] = []
            var skipped = 0
            for row in try Row.fetchAll(db, sql: "SELECT * FROM region_state ORDER BY rowid") {
                let specText: String = row["spec"]
                guard let json = try? JSONParser.parse(specText), let spec = try? RegionSpec(json: json),
                    let state = RegionState(rawValue: row["state"])
                else {
                    skipped += 1
                    continue
                }
                out.append(
                    RegionSnapshot(
                        client: row["client"], spec: spec, state: state,
                        lastSeen: Timestamp(nanoseconds: row["last_seen_ns"]),
                        enteredAt: Timestamp(nanoseconds: row["entered_at_ns"]), dwellsFired: row["dwells_fired"]))
            }
            return (out, skipped)
        }
    }

    /// A published event: its id, type, time and CloudEvent JSON text.
    public struct StoredEvent: Sendable, Equatable {
        public var id: String
        public var type: String
        public var time: Timestamp
        public var body: String

        public init(id: String, type: String, time: Timestamp, body: String) {
            self.id = id
            self.type = type
            self.time = time
            self.body = body
        }
    }

    /// Appends events to the history in one transaction and trims it to `historyLimit`.
    public func append(_ events: [StoredEvent]) throws {
        guard !events.isEmpty else { return }
        try db.write { db in
            let statement = try db.makeStatement(
                sql: "INSERT OR IGNORE INTO event (id, type, time_ns, body) VALUES (?, ?, ?, ?)")
            for e in events { try statement.execute(arguments: [e.id, e.type, e.time.nanoseconds, e.body]) }
            try db.execute(
                sql: "DELETE FROM event WHERE seq <= (SELECT MAX(seq) FROM event) - ?", arguments: [historyLimit])
        }
    }

    /// The history after an id (all when nil), oldest first.
    public func events(after id: String? = nil, limit: Int = 1000) throws -> [StoredEvent] {
        try db.read { db in
            let rows: [Row]
            if let id {
                rows = try Row.fetchAll(
                    db,
                    sql: "SELECT * FROM event WHERE seq > (SELECT seq FROM event WHERE id = ?) ORDER BY seq LIMIT ?",
                    arguments: [id, limit])
            } else {
                rows = try Row.fetchAll(db, sql: "SELECT * FROM event ORDER BY seq LIMIT ?", arguments: [limit])
            }
            return rows.map {
                StoredEvent(
                    id: $0["id"], type: $0["type"], time: Timestamp(nanoseconds: $0["time_ns"]), body: $0["body"])
            }
        }
    }
}
