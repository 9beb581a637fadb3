import BeaconCore
import Synchronization

extension StateStore {
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

    /// Appends events to the history and, for each, an outbox row per webhook that wants it,
    /// in one transaction; trims the history to `historyLimit`. An event whose id the history
    /// holds already is neither stored nor routed again. Once this returns, the events
    /// survive a crash of the process and will be delivered; with `synced`, a power cut too.
    ///
    /// - Parameters:
    ///   - synced: on the disk before this returns (alerts; `SQLiteDatabase.write`).
    ///   - webhooks: the ids of the webhooks each event goes to.
    public func append(
        _ events: [StoredEvent], at now: Timestamp = Timestamp(nanoseconds: 0), synced: Bool = false,
        webhooks: (StoredEvent) -> [String] = { _ in [] }
    ) throws {
        guard !events.isEmpty else { return }
        try commit(events, at: now, synced: synced, webhooks: webhooks)
    }

    /// `append`, `saveRegions` and `saveAssets` in one transaction: the events of an engine's
    /// turn and the region and zone states they moved to are on the disk together or not at
    /// all. Apart, a crash between the two commits (a worn card's fsync takes 100 ms and
    /// more) left an alert that would be delivered with the state from before it, so the next
    /// start raised it again; and an alert cost two fsyncs. nil states are left as they are.
    /// Synced when `synced` says so or a region's state or an asset's zones changed. Returns
    /// the asset rows written.
    @discardableResult
    public func commit(
        _ events: [StoredEvent], at now: Timestamp = Timestamp(nanoseconds: 0), synced: Bool = false,
        webhooks: (StoredEvent) -> [String] = { _ in [] }, regions: [RegionSnapshot]? = nil,
        assets: [AssetSnapshot]? = nil
    ) throws -> Int {
        try savedRegions.withLock { regionCache in
            try savedAssets.withLock { assetCache in
                let db = try self.db
                let generation = db.generation
                let regionRows = regions.flatMap { RegionRows($0, over: regionCache.rows(in: generation)) }
                let assetRows = assets.flatMap { AssetRows($0, over: assetCache.rows(in: generation)) }
                guard !events.isEmpty || regionRows != nil || assetRows != nil else { return 0 }
                let sync = synced || regionRows?.stateChanged == true || assetRows?.zonesChanged == true
                let historyLimit = self.historyLimit
                try db.write(synced: sync) { (db) throws(SQLiteError) in
                    if !events.isEmpty {
                        try Self.insert(events, at: now, webhooks: webhooks, keeping: historyLimit, in: db)
                    }
                    try regionRows?.write(in: db)
                    try assetRows?.write(in: db)
                }
                // Emptied while it wrote (found corrupt): everything is written again next time.
                let same = db.generation == generation
                if let regionRows {
                    regionCache = same ? SavedRows(rows: regionRows.current, generation: generation) : nil
                }
                if let assetRows { assetCache = same ? SavedRows(rows: assetRows.kept, generation: generation) : nil }
                return assetRows?.count ?? 0
            }
        }
    }

    private static func insert(
        _ events: [StoredEvent], at now: Timestamp, webhooks: (StoredEvent) -> [String], keeping historyLimit: Int,
        in db: SQLiteConnection
    ) throws(SQLiteError) {
        let insertEvent = try db.prepare("INSERT OR IGNORE INTO event (id, type, time_ns, body) VALUES (?, ?, ?, ?)")
        let insertOutbox = try db.prepare(
            "INSERT INTO outbox (webhook, event_id, type, body, enqueued_ns) VALUES (?, ?, ?, ?, ?)")
        for e in events {
            try insertEvent.execute([e.id, e.type, e.time.nanoseconds, e.body])
            // Stored already (a copy kept through a crash, `UnsavedKeep`): routed already.
            guard db.changes > 0 else { continue }
            for webhook in webhooks(e) {
                try insertOutbox.execute([webhook, e.id, e.type, e.body, now.nanoseconds])
            }
        }
        try db.execute("DELETE FROM event WHERE seq <= (SELECT MAX(seq) FROM event) - ?", [historyLimit])
    }

    /// The history after an id (from the oldest kept when nil), oldest first, optionally only
    /// the types a glob matches. An id no longer in the history (trimmed, or from another
    /// gateway) is compared as a string: ids sort in publication order.
    public func events(after id: String? = nil, matching glob: EventTypeGlob? = nil, limit: Int = 1000) throws
        -> [StoredEvent]
    {
        try eventsPage(after: id, matching: glob, limit: limit, scanLimit: .max).events
    }

    /// One page of the history, for a reader that goes through it a page at a time (an event
    /// stream resumed from far back): at most `limit` events, after reading at most
    /// `scanLimit` rows, so a filter that matches few rows costs a bounded read per page too.
    public struct EventPage: Sendable {
        public var events: [StoredEvent]
        /// The last row read, matched or not: where the next page starts.
        public var cursor: String?
        /// True when the read reached the newest stored event.
        public var atEnd: Bool
    }

    public func eventsPage(after id: String?, matching glob: EventTypeGlob?, limit: Int, scanLimit: Int) throws
        -> EventPage
    {
        try db.read { (db) throws(SQLiteError) in
            var sql = "SELECT id, type, time_ns, body FROM event"
            var arguments: [any SQLBindable] = []
            if let id {
                if let seq = try db.scalarInt64("SELECT seq FROM event WHERE id = ?", [id]) {
                    sql += " WHERE seq > ?"
                    arguments.append(seq)
                } else {
                    sql += " WHERE id > ?"
                    arguments.append(id)
                }
            }
            sql += " ORDER BY seq"
            var page = EventPage(events: [], cursor: id, atEnd: true)
            var scanned = 0
            try db.prepare(sql).forEachRow(arguments) { row in
                scanned += 1
                let rowID = row.string(0)
                page.cursor = rowID
                let type = row.string(1)
                if glob?.matches(type: type) ?? true {
                    page.events.append(
                        StoredEvent(
                            id: rowID, type: type, time: Timestamp(nanoseconds: row.int64(2)), body: row.string(3)))
                }
                guard page.events.count < limit, scanned < scanLimit else {
                    page.atEnd = false
                    return false
                }
                return true
            }
            return page
        }
    }

    /// Deletes these events from the history; their outbox rows stay.
    public func removeEvents(_ ids: [String]) throws {
        guard !ids.isEmpty else { return }
        try db.write { (db) throws(SQLiteError) in
            let delete = try db.prepare("DELETE FROM event WHERE id = ?")
            for id in ids { try delete.execute([id]) }
        }
    }

    /// Empties the history; the outbox stays.
    public func removeAllEvents() throws {
        try db.write { (db) throws(SQLiteError) in try db.execute("DELETE FROM event") }
    }

    /// The id of the newest event in the history.
    public func newestEventID() throws -> String? {
        try db.read { (db) throws(SQLiteError) in try db.scalarString("SELECT id FROM event ORDER BY seq DESC LIMIT 1")
        }
    }
}
