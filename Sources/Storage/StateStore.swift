import BeaconCore
import Foundation
import GRDB
import Synchronization

/// beacond's SQLite file under `gateway.state_dir`: what must survive a restart or a power
/// cut — each region's state and last sighting (SPEC §3: no second enter after a restart,
/// exits dated from the last sighting), the history of events published, the webhook
/// outbox with its dead letters, and the regions added through the API.
///
/// WAL mode with `synchronous = NORMAL`: a commit survives a crash of the daemon, and a
/// power cut loses at most the last commits before it, never the file's consistency.
/// Callers batch: one transaction per engine turn, never one per advertisement. A pool
/// lets the API and webhook threads read while the engine's thread writes.
public final class StateStore: Sendable {
    let db: DatabasePool
    public let path: String
    /// Events kept in the history; older ones are deleted as new ones arrive.
    public let historyLimit: Int
    /// What `saveRegions` last wrote (nil: nothing yet this run, so the first save replaces all).
    let savedRegions = Mutex<[RegionKey: RegionSnapshot]?>(nil)

    public init(directory: String, historyLimit: Int = 100_000) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        path = (directory as NSString).appendingPathComponent("beacond.sqlite")
        self.historyLimit = historyLimit
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        db = try DatabasePool(path: path, configuration: configuration)
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
        migrator.registerMigration("v2-outbox") { db in
            try db.create(table: "outbox") { t in
                t.column("seq", .integer).primaryKey(autoincrement: true)
                t.column("webhook", .text).notNull()
                t.column("event_id", .text).notNull()
                t.column("type", .text).notNull()
                t.column("body", .text).notNull()
                t.column("enqueued_ns", .integer).notNull()
            }
            try db.create(index: "outbox_by_webhook", on: "outbox", columns: ["webhook", "seq"])
            try db.create(table: "dead_letter") { t in
                t.column("seq", .integer).primaryKey(autoincrement: true)
                t.column("webhook", .text).notNull()
                t.column("event_id", .text).notNull()
                t.column("type", .text).notNull()
                t.column("body", .text).notNull()
                t.column("enqueued_ns", .integer).notNull()
                t.column("dead_ns", .integer).notNull()
                t.column("reason", .text).notNull()
            }
            try db.create(table: "webhook_state") { t in
                t.column("webhook", .text).primaryKey()
                t.column("url", .text).notNull()
                t.column("disabled_reason", .text)
                t.column("disabled_ns", .integer)
            }
            try db.create(table: "api_region") { t in
                t.column("client", .text).notNull()
                t.column("region", .text).notNull()
                t.column("spec", .text)  // NULL: removed through the API
                t.column("seq", .integer).notNull()
                t.primaryKey(["client", "region"])
            }
        }
        migrator.registerMigration("v3-outbox-age") { db in
            // Expiry (max_age) finds old rows without scanning a dead webhook's whole backlog.
            try db.create(index: "outbox_by_age", on: "outbox", columns: ["webhook", "enqueued_ns"])
        }
        migrator.registerMigration("v4-alarm-flags") { db in
            try db.create(table: "alarm_flag") { t in
                t.column("alarm", .text).primaryKey()
                t.column("active", .boolean).notNull()
            }
        }
        return migrator
    }
}
