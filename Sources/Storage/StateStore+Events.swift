import BeaconCore
import Synchronization

extension StateStore {
    /// A published event: its id, type, time and CloudEvent JSON text.
    public struct StoredEvent: Sendable, Equatable {
        public var id: String
        public var type: String
        public var time: Timestamp
        public var body: String
        /// Its hand-over key when the publisher made it from the engine's value; nil for one
        /// read back from the file.
        public var key: HandOverKey?

        public init(id: String, type: String, time: Timestamp, body: String, key: HandOverKey? = nil) {
            self.id = id
            self.type = type
            self.time = time
            self.body = body
            self.key = key
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
    /// Synced when `synced` says so or a region's state or an asset's zones changed. The zone
    /// transitions the turn made go in the same transaction (SPEC §8). `final`: the save at a
    /// clean stop, which writes every asset's latest position (`worthWriting`). Returns the
    /// asset rows written.
    @discardableResult
    public func commit(
        _ events: [StoredEvent], at now: Timestamp = Timestamp(nanoseconds: 0), synced: Bool = false,
        webhooks: (StoredEvent) -> [String] = { _ in [] }, regions: [RegionSnapshot]? = nil,
        assets: [AssetSnapshot]? = nil, transitions: [ZoneTransition] = [], final: Bool = false
    ) throws -> Int {
        try savedRegions.withLock { regionCache in
            try savedAssets.withLock { assetCache in
                let db = try self.db
                let generation = db.generation
                let regionRows = regions.flatMap { RegionRows($0, over: regionCache.rows(in: generation)) }
                let tick = assets.map { assetTick.due($0) } ?? false
                let assetRows = assets.flatMap {
                    AssetRows($0, over: assetCache.rows(in: generation), final: final, tick: tick)
                }
                guard !events.isEmpty || regionRows != nil || assetRows != nil || !transitions.isEmpty else { return 0 }
                let sync = synced || regionRows?.stateChanged == true || assetRows?.zonesChanged == true
                let retention = self.retention.withLock { $0 }
                try historyCounts.withLock { counts in
                    let before = counts
                    var written: HistoryCounts?
                    // Unknown until the transaction commits: a failed one is counted again.
                    counts = nil
                    try db.write(synced: sync) { (db) throws(SQLiteError) in
                        if !events.isEmpty {
                            var current = try before.current(generation: generation, in: db)
                            try Self.insert(events, at: now, webhooks: webhooks, in: db, counts: &current)
                            try Self.trim(retention, newest: events.map(\.time).max()!, in: db, counts: &current)
                            written = current
                        }
                        try regionRows?.write(in: db)
                        try assetRows?.write(in: db)
                        try Self.insert(transitions, in: db)
                    }
                    counts = events.isEmpty ? before : written
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
        _ events: [StoredEvent], at now: Timestamp, webhooks: (StoredEvent) -> [String], in db: SQLiteConnection,
        counts: inout HistoryCounts
    ) throws(SQLiteError) {
        let insertEvent = try db.cached(
            "INSERT OR IGNORE INTO event (id, type, time_ns, body, telemetry) VALUES (?, ?, ?, '', ?)")
        let insertBody = try db.cached("INSERT INTO event_body (seq, body) VALUES (?, ?)")
        let insertOutbox = try db.cached(
            "INSERT INTO outbox (webhook, event_id, type, body, body_seq, enqueued_ns) VALUES (?, ?, ?, '', ?, ?)")
        for e in events {
            let telemetry = HistoryRetention.isTelemetry(e.type)
            try insertEvent.execute([e.id, e.type, e.time.nanoseconds, telemetry ? 1 : 0])
            // Stored already (a copy kept through a crash, `UnsavedKeep`): routed already.
            guard db.changes > 0 else { continue }
            // The body once, under the history row's seq; every outbox row points at it.
            let seq = db.lastInsertedRowID
            try insertBody.execute([seq, e.body])
            counts.add(telemetry: telemetry, 1)
            for webhook in webhooks(e) {
                try insertOutbox.execute([webhook, e.id, e.type, seq, now.nanoseconds])
            }
        }
    }

    /// Deletes, in each class, the events older than its `maxAge` before the newest event
    /// written, then the oldest (by time) past its `maxEvents` — at most `trimChunk` of them
    /// per class and commit. Both use the class's time index: a write that finds nothing to delete reads a
    /// row or two. The bound is for a reload that lowers a limit under a long history, or a
    /// clock stepped far forward: the engine commits on its own thread, and 500,000 events
    /// deleted in one commit stalled its turns 7.8 s; the rest go in the commits that follow.
    static func trim(
        _ retention: HistoryRetention, newest: Timestamp, in db: SQLiteConnection, counts: inout HistoryCounts
    ) throws(SQLiteError) {
        for telemetry in [false, true] {
            let keep = retention.keep(telemetry: telemetry)
            let flag = telemetry ? 1 : 0
            let cutoff = newest.nanoseconds &- keep.maxAge.nanoseconds
            try db.execute(
                "DELETE FROM event WHERE seq IN (SELECT seq FROM event WHERE telemetry = ? AND time_ns < ? LIMIT ?)",
                [flag, cutoff, trimChunk])
            let aged = db.changes
            counts.add(telemetry: telemetry, -aged)
            let excess = min(counts.count(telemetry: telemetry) - keep.maxEvents, trimChunk - aged)
            guard excess > 0 else { continue }
            try db.execute(
                "DELETE FROM event WHERE seq IN (SELECT seq FROM event WHERE telemetry = ? ORDER BY time_ns LIMIT ?)",
                [flag, excess])
            counts.add(telemetry: telemetry, -db.changes)
        }
    }

    /// A history row's body (`e`): in `event_body` under its seq, or in the row for one
    /// written before v13 (`oneBodyMigration`).
    static let eventBody = "COALESCE(b.body, e.body)"
    static let joinEventBody = "LEFT JOIN event_body b ON b.seq = e.seq"
    /// An outbox row's body (`o`): the one its `body_seq` points at, or its own before v13.
    static let outboxBody = "CASE WHEN o.body_seq IS NULL THEN o.body ELSE b.body END"
    static let joinOutboxBody = "LEFT JOIN event_body b ON b.seq = o.body_seq"

    /// The most events of a class one commit deletes: about 30 ms of the engine's thread.
    static let trimChunk = 2_000

    /// Adds positions to the history's recent end in memory, never to the file (SPEC §4.4,
    /// `RecentEvents`): readers of the history see them from now on, until they are older than
    /// the telemetry's age or too many.
    public func remember(_ positions: [StoredEvent]) {
        guard !positions.isEmpty else { return }
        let keep = retention.withLock { $0.telemetry }
        recent.withLock { $0.append(positions, keep: keep) }
    }

    /// How many positions the history holds in memory.
    public var recentCount: Int { recent.withLock { $0.count } }

    /// Changes what the history keeps (a reload); applied from the next write on.
    public func setRetention(_ retention: HistoryRetention) {
        self.retention.withLock { $0 = retention }
    }

    /// The history after an id (from the oldest kept when nil), oldest first, optionally only
    /// the types a glob matches. An id no longer in the history (trimmed, or from another
    /// gateway) is compared as a string: ids sort in publication order.
    public func events(
        after id: String? = nil, matching glob: EventTypeGlob? = nil, limit: Int = 1000, order: HistoryQuery = .init()
    ) throws -> [StoredEvent] {
        try eventsPage(after: id, matching: glob, limit: limit, scanLimit: .max, order: order).events
    }

    /// One page of the history, for a reader that goes through it a page at a time (an event
    /// stream resumed from far back): at most `limit` events, after reading at most
    /// `scanLimit` rows, so a filter that matches few rows costs a bounded read per page too.
    public struct EventPage: Sendable {
        public var events: [StoredEvent]
        /// The last row read, matched or not: where the next page starts.
        public var cursor: String?
        /// True when the read reached the newest stored event (the oldest, newest first).
        public var atEnd: Bool
    }

    /// Which end of the history a read starts from, and how far back it goes.
    public struct HistoryQuery: Sendable {
        /// Newest first, from before `before` when given (`beaconctl events --last N`).
        public var newestFirst = false
        public var before: String?
        /// Only events stamped at or after this time (`beaconctl events --since 1h`).
        public var since: Timestamp?

        public init(newestFirst: Bool = false, before: String? = nil, since: Timestamp? = nil) {
            self.newestFirst = newestFirst
            self.before = before
            self.since = since
        }
    }

    public func eventsPage(
        after id: String?, matching glob: EventTypeGlob?, limit: Int, scanLimit: Int, order: HistoryQuery = .init()
    ) throws -> EventPage {
        let stored = try storedPage(after: id, matching: glob, limit: limit, scanLimit: scanLimit, order: order)
        let kept = recent.withLock {
            $0.matching(
                after: id, before: order.before, since: order.since, glob: glob, newestFirst: order.newestFirst)
        }
        return stored.merged(with: kept, limit: limit, newestFirst: order.newestFirst)
    }

    /// `eventsPage` of the file alone.
    private func storedPage(
        after id: String?, matching glob: EventTypeGlob?, limit: Int, scanLimit: Int, order: HistoryQuery
    ) throws -> EventPage {
        try db.read { (db) throws(SQLiteError) in
            var conditions: [String] = []
            var arguments: [any SQLBindable] = []
            func bound(_ id: String, _ comparison: String) throws(SQLiteError) {
                if let seq = try db.scalarInt64("SELECT seq FROM event WHERE id = ?", [id]) {
                    conditions.append("e.seq \(comparison) ?")
                    arguments.append(seq)
                } else {
                    conditions.append("e.id \(comparison) ?")
                    arguments.append(id)
                }
            }
            if let id { try bound(id, ">") }
            if let before = order.before { try bound(before, "<") }
            if let since = order.since {
                // Through the class indexes: the first row of the time range, then by seq.
                let first = try db.scalarInt64(
                    "SELECT MIN(seq) FROM event WHERE telemetry IN (0, 1) AND time_ns >= ?", [since.nanoseconds])
                conditions.append("e.seq >= ? AND e.time_ns >= ?")
                arguments += [first ?? Int64.max, since.nanoseconds]
            }
            var sql = "SELECT e.id, e.type, e.time_ns, \(Self.eventBody) FROM event e \(Self.joinEventBody)"
            if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
            sql += order.newestFirst ? " ORDER BY e.seq DESC" : " ORDER BY e.seq"
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
        recent.withLock { $0.remove(Set(ids)) }
        historyCounts.withLock { $0 = nil }
    }

    /// Empties the history; the outbox stays.
    public func removeAllEvents() throws {
        try db.write { (db) throws(SQLiteError) in try db.execute("DELETE FROM event") }
        recent.withLock { $0.remove(nil) }
        historyCounts.withLock { $0 = nil }
    }

    /// The id of the newest event in the history, stored or in memory.
    public func newestEventID() throws -> String? {
        let stored = try db.read { (db) throws(SQLiteError) in
            try db.scalarString("SELECT id FROM event ORDER BY seq DESC LIMIT 1")
        }
        let kept = recent.withLock { $0.newestID }
        return [stored, kept].compactMap { $0 }.max()
    }
}

extension StateStore.EventPage {
    /// This page of the file with the positions kept in memory that fall within it, in id
    /// order (publication order), at most `limit`. A page that did not reach the file's end
    /// takes only the kept events up to where it stopped reading; the next page starts after
    /// the last event returned.
    func merged(with kept: [StateStore.StoredEvent], limit: Int, newestFirst: Bool) -> Self {
        guard !kept.isEmpty else { return self }
        let inOrder: (String, String) -> Bool = newestFirst ? { $0 > $1 } : { $0 < $1 }
        let reach = atEnd ? kept : kept.filter { e in cursor.map { !inOrder($0, e.id) } ?? true }
        var all: [StateStore.StoredEvent] = []
        all.reserveCapacity(events.count + reach.count)
        var (i, j) = (0, 0)
        while i < events.count || j < reach.count {
            if j == reach.count || (i < events.count && inOrder(events[i].id, reach[j].id)) {
                all.append(events[i])
                i += 1
            } else {
                all.append(reach[j])
                j += 1
            }
        }
        guard all.count > limit else {
            // At the end: the later of the last row read and the last event returned.
            let last = [cursor, all.last?.id].compactMap { $0 }.max(by: inOrder)
            return Self(events: all, cursor: atEnd ? last : cursor, atEnd: atEnd)
        }
        let page = Array(all.prefix(limit))
        return Self(events: page, cursor: page.last!.id, atEnd: false)
    }
}

/// How many events of each class the history holds, in one generation of the file.
struct HistoryCounts: Sendable {
    var generation: Int
    var alerts: Int
    var telemetry: Int

    func count(telemetry: Bool) -> Int { telemetry ? self.telemetry : alerts }

    mutating func add(telemetry: Bool, _ n: Int) {
        if telemetry { self.telemetry += n } else { alerts += n }
    }
}

extension Optional where Wrapped == HistoryCounts {
    /// The counts of this generation of the file, counted now when not known (at the first
    /// write, and after the file was emptied or events removed).
    func current(generation: Int, in db: SQLiteConnection) throws(SQLiteError) -> HistoryCounts {
        if let counts = self, counts.generation == generation { return counts }
        let alerts = try db.scalarInt64("SELECT COUNT(*) FROM event WHERE telemetry = 0") ?? 0
        let telemetry = try db.scalarInt64("SELECT COUNT(*) FROM event WHERE telemetry = 1") ?? 0
        return HistoryCounts(generation: generation, alerts: Int(alerts), telemetry: Int(telemetry))
    }
}
