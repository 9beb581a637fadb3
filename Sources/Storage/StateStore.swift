import BeaconCore
import Glibc
import Synchronization

/// beacond's SQLite file under `gateway.state_dir`: what must survive a restart or a power
/// cut — each region's state and last sighting (SPEC §3: no second enter after a restart,
/// exits dated from the last sighting), the history of events published, the webhook
/// outbox with its dead letters, and the regions added through the API.
///
/// WAL mode with `synchronous = NORMAL`: a commit survives a crash of the daemon, and a
/// power cut loses at most the last commits before it, never the file's consistency; the
/// commits that must survive a power cut too (alerts, region and zone states) are synced.
/// Callers batch: one transaction per engine turn, never one per advertisement. Readers
/// (the API and webhook threads) never wait for the engine's thread, which writes.
///
/// SQLite is used through its C API, not an ORM: the store needs a dozen statements, and
/// keeping Foundation out of the daemon keeps a gateway's binary and memory small.
public final class StateStore: Sendable {
    /// The directory the file is in, and the file.
    let directory: String
    public let path: String
    /// How long and how many events of each class the history keeps; older ones are deleted
    /// as new ones arrive. Changed by a reload (`setRetention`).
    let retention: Mutex<HistoryRetention>
    /// Events of each class in the history, counted once per file generation and kept up to
    /// date by every write, so that the count bound costs no scan per write.
    let historyCounts = Mutex<HistoryCounts?>(nil)
    /// What `saveRegions` and `saveAssets` last wrote, and in which of the file's generations
    /// (nil, or another generation: nothing yet, so the next save replaces all).
    let savedRegions = Mutex<SavedRows<StoredRegionKey, RegionSnapshot>?>(nil)
    let savedAssets = Mutex<SavedRows<String, AssetSnapshot>?>(nil)
    /// When the assets' routine writes were last due (`AssetTick`).
    let assetTick = AssetTick()
    /// The positions of the history's recent end, in memory only (SPEC §4.4).
    let recent = Mutex(RecentEvents())

    /// Dead letters kept per webhook; older ones are discarded, and counted, as new ones come.
    public let deadLetterLimit: Int

    /// The file once open, the last reason it could not be, and what to do on opening it.
    let opening: Mutex<Opening>

    /// Opens (creating if needed) the store under `directory` now; throws if it cannot.
    ///
    /// - Parameter deadLetterLimit: without a cap, a webhook dead for months would fill the
    ///   gateway's storage with dead letters (a store's positions alone are ~900,000 events a
    ///   day); the newest 10,000 say what was lost, and the count says how much.
    public convenience init(
        directory: String, retention: HistoryRetention = HistoryRetention(), deadLetterLimit: Int = 10_000
    ) throws {
        self.init(
            unopened: directory, retention: retention, deadLetterLimit: deadLetterLimit, setAsideSuffix: nil,
            onOpen: nil)
        try open()
    }

    init(
        unopened directory: String, retention: HistoryRetention, deadLetterLimit: Int,
        setAsideSuffix: (@Sendable () -> String)?, onOpen: (@Sendable (Opened) -> Void)?
    ) {
        self.directory = directory
        path = directory.hasSuffix("/") ? directory + "beacond.sqlite" : directory + "/beacond.sqlite"
        self.retention = Mutex(retention)
        self.deadLetterLimit = deadLetterLimit
        opening = Mutex(Opening(setAsideSuffix: setAsideSuffix, onOpen: onOpen))
    }

    /// Opens the store under `directory` now. A file SQLite finds corrupt or not a database at
    /// all is set aside (`opening(directory:setAsideSuffix:onOpen:)`). Returns the store and
    /// where the old file went, if it was set aside.
    public static func open(directory: String, setAsideSuffix suffix: String) throws -> (
        store: StateStore, setAside: String?
    ) {
        let aside = Mutex<String?>(nil)
        let store = StateStore.opening(
            directory: directory, setAsideSuffix: { suffix },
            onOpen: { opened in aside.withLock { $0 = opened.setAside } })
        try store.open()
        return (store, aside.withLock { $0 })
    }

    /// Lets a write that finds the file corrupt while the daemon runs empty it in place and go
    /// on (`SQLiteDatabase+Recovery`): the regions added and alarms switched through the API,
    /// the region and zone states, the webhooks' disabled flags and a backlog of up to
    /// `carriedBacklog` undelivered events are kept if they can still be read; the history
    /// and dead letters are not. A copy of the corrupt file goes beside it as
    /// `beacond.sqlite.corrupt-SUFFIX` when the disk has room for it.
    public func recoverWhenCorrupt(
        copySuffix: @escaping @Sendable () -> String,
        report: @escaping @Sendable (SQLiteDatabase.Report) -> Void
    ) {
        let path = self.path
        let recovery = SQLiteDatabase.Recovery(
            carried: [
                .init("api_region"), .init("alarm_flag"), .init("region_state"), .init("asset_state"),
                .init("webhook_state"), .init("dead_letter_discarded"), .init("outbox", limit: Self.carriedBacklog),
                // The bodies the backlog points at, not the history's.
                .init("event_body", where: "seq IN (SELECT body_seq FROM carried.outbox)"),
            ],
            copyPath: { path + ".corrupt-" + copySuffix() }, report: report)
        opening.withLock { o in
            o.recovery = recovery
            o.database?.recovery.withLock { $0 = recovery }
        }
    }

    /// Reads the whole file and empties it if damaged (`SQLiteDatabase.verify`).
    public func verify() -> SQLiteDatabase.Verification {
        do { return try db.verify() } catch { return .failed("\(error)") }
    }

    /// How many times the file was found corrupt while running and emptied (`recoverWhenCorrupt`).
    public var timesEmptied: Int { opening.withLock { $0.database?.generation ?? 0 } }

    /// What an operator does about a failed write: a lock another process holds ends when
    /// that process commits; anything else is the disk (full, read-only, gone).
    public func remedy(for error: any Error) -> String {
        if let error = error as? SQLiteError, error.isBusy {
            return
                "another process holds \(path)'s lock (a sqlite3 shell with a transaction open?); end its transaction"
        }
        return "free space in \(path)"
    }

    /// Undelivered events carried to an emptied file (held in memory meanwhile, ~1 KB each);
    /// a larger backlog is lost with the file, as on a restart.
    public static let carriedBacklog = 20_000

    /// `mkdir -p`: the state directory and any missing parents.
    static func makeDirectories(_ path: String) throws {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component + "/"
            if mkdir(prefix, 0o750) != 0 && errno != EEXIST {
                throw StoreDirectoryError(path: prefix, reason: String(cString: strerror(errno)))
            }
        }
    }

    /// The schema, one step per release that changed it. Files from before this list was
    /// kept by `user_version` are recognised by step name (see `SQLiteDatabase`).
    static let migrations: [SQLiteDatabase.Migration] = [
        .init(
            "v1",
            """
            CREATE TABLE region_state (client TEXT NOT NULL, region TEXT NOT NULL, spec TEXT NOT NULL,
              state TEXT NOT NULL, last_seen_ns INTEGER NOT NULL, entered_at_ns INTEGER NOT NULL,
              dwells_fired INTEGER NOT NULL, PRIMARY KEY (client, region));
            CREATE TABLE event (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
              type TEXT NOT NULL, time_ns INTEGER NOT NULL, body TEXT NOT NULL);
            """),
        .init(
            "v2-outbox",
            """
            CREATE TABLE outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, webhook TEXT NOT NULL,
              event_id TEXT NOT NULL, type TEXT NOT NULL, body TEXT NOT NULL, enqueued_ns INTEGER NOT NULL);
            CREATE INDEX outbox_by_webhook ON outbox (webhook, seq);
            CREATE TABLE dead_letter (seq INTEGER PRIMARY KEY AUTOINCREMENT, webhook TEXT NOT NULL,
              event_id TEXT NOT NULL, type TEXT NOT NULL, body TEXT NOT NULL, enqueued_ns INTEGER NOT NULL,
              dead_ns INTEGER NOT NULL, reason TEXT NOT NULL);
            CREATE TABLE webhook_state (webhook TEXT PRIMARY KEY, url TEXT NOT NULL, disabled_reason TEXT,
              disabled_ns INTEGER);
            CREATE TABLE api_region (client TEXT NOT NULL, region TEXT NOT NULL,
              spec TEXT, -- NULL: removed through the API
              seq INTEGER NOT NULL, PRIMARY KEY (client, region));
            """),
        // Expiry (max_age) finds old rows without scanning a dead webhook's whole backlog.
        .init("v3-outbox-age", "CREATE INDEX outbox_by_age ON outbox (webhook, enqueued_ns)"),
        .init("v4-alarm-flags", "CREATE TABLE alarm_flag (alarm TEXT PRIMARY KEY, active BOOLEAN NOT NULL)"),
        .init("v5-asset-state", "CREATE TABLE asset_state (asset TEXT PRIMARY KEY, snapshot TEXT NOT NULL)"),
        // Dead letters capped per webhook (`deadLetterLimit`); how many were discarded.
        .init(
            "v6-dead-letter-cap",
            """
            CREATE INDEX dead_letter_by_webhook ON dead_letter (webhook, seq);
            CREATE TABLE dead_letter_discarded (webhook TEXT PRIMARY KEY, count INTEGER NOT NULL);
            """),
        // The history kept by class (`HistoryRetention`): telemetry apart from alerts.
        .init(
            "v7-history-classes",
            """
            ALTER TABLE event ADD COLUMN telemetry INTEGER NOT NULL DEFAULT 0;
            UPDATE event SET telemetry = 1
              WHERE type IN ('beacond.asset.position', 'beacond.ranging', 'beacond.beacon.proximity');
            CREATE INDEX event_by_class ON event (telemetry, seq);
            CREATE INDEX event_by_class_time ON event (telemetry, time_ns);
            """),
        // A site's hand-over (SPEC §6.3): an entry that carries the locator's id and body says
        // which gateway decided it and when that one enqueued it, so that the decider's
        // `delivered` marks drop it by its own clock; found by event id when the decision comes.
        .init(
            "v8-site-decisions",
            """
            ALTER TABLE outbox ADD COLUMN decider TEXT;
            ALTER TABLE outbox ADD COLUMN decider_enqueued_ns INTEGER;
            CREATE INDEX outbox_by_event ON outbox (event_id);
            CREATE INDEX outbox_by_decider ON outbox (webhook, decider, decider_enqueued_ns);
            """),
        // Zone analytics (SPEC §8): transitions, hourly and daily roll-ups, heat.
        analyticsMigration,
        // The heat of the hour under way as appended deltas (issue 53): rewriting the hour's
        // whole map every 30 s was a few kilobytes of overflow pages each time.
        .init(
            "v10-heat-deltas",
            "CREATE TABLE heat_delta (hour_ns INTEGER NOT NULL, level INTEGER NOT NULL, cells TEXT NOT NULL);"),
        // One index fewer to write with every event (issue 53): the trim by count takes a
        // class's oldest by time, through the class's time index, as the trim by age does.
        .init("v11-one-class-index", "DROP INDEX event_by_class;"),
        // Visits counted apart from the live membership (SPEC §10).
        visitAnalyticsMigration,
        oneBodyMigration,
    ]

    /// An alert's CloudEvent written once (issue 54), not once for the history and again for
    /// each webhook's outbox: `event_body` holds it under the history row's own `seq`, and an
    /// outbox row points at it (`body_seq`). It goes with the last of the two to go, which
    /// the triggers find through indexes the tables have (the history's key, the outbox's
    /// event id), so no index is added to a commit. Rows from before keep their body in the
    /// row (`body_seq` NULL, or no `event_body` row); readers take whichever is there. A
    /// separate table, not the history's row: a damaged history page must not take the
    /// webhooks' backlog with it (`CorruptStoreTests`; the recovery carries the bodies the
    /// backlog points at). `bench/outbox-pages.py`: one page more per alert with one webhook,
    /// 18–25 % fewer with two or three.
    static let oneBodyMigration = SQLiteDatabase.Migration(
        "v13-one-body",
        """
        CREATE TABLE event_body (seq INTEGER PRIMARY KEY, body TEXT NOT NULL);
        ALTER TABLE outbox ADD COLUMN body_seq INTEGER;
        CREATE TRIGGER event_body_after_outbox AFTER DELETE ON outbox WHEN old.body_seq IS NOT NULL BEGIN
          DELETE FROM event_body WHERE seq = old.body_seq
            AND NOT EXISTS (SELECT 1 FROM event WHERE seq = old.body_seq)
            AND NOT EXISTS (SELECT 1 FROM outbox WHERE event_id = old.event_id);
        END;
        CREATE TRIGGER event_body_after_event AFTER DELETE ON event BEGIN
          DELETE FROM event_body WHERE seq = old.seq AND NOT EXISTS (SELECT 1 FROM outbox WHERE event_id = old.id);
        END;
        """)
}

/// Rows a save wrote, so that the next writes only what changed: valid in the generation of
/// the file they were written in (`SQLiteDatabase.generation`); an emptied file needs them all.
struct SavedRows<Key: Hashable & Sendable, Row: Sendable>: Sendable {
    var rows: [Key: Row]
    var generation: Int
}

extension StateStore {
    /// The size of the file's write-ahead log (0 when there is none). It stays under
    /// `SQLiteDatabase.walSizeLimit` but while another process holds a read transaction open
    /// on the file (a `sqlite3` shell left in a terminal, a backup tool): then nothing can be
    /// copied back and it grows with every write, towards a full card. Reported by status and
    /// metrics so that `beaconctl doctor` can tell.
    public var walBytes: Int {
        var info = stat()
        return stat(path + "-wal", &info) == 0 ? Int(info.st_size) : 0
    }
}

extension Optional {
    /// The rows saved in `generation`, or nil.
    func rows<Key, Row>(in generation: Int) -> [Key: Row]? where Wrapped == SavedRows<Key, Row> {
        self.flatMap { $0.generation == generation ? $0.rows : nil }
    }
}

/// The state directory could not be created.
public struct StoreDirectoryError: Error, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "cannot create \(path): \(reason)" }
}
