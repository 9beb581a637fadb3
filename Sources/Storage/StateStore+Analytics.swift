import BeaconCore

/// The zone analytics (SPEC §8): each change of zone membership, written in the same
/// transaction as the engine's turn (`commit`), so that the states a restart restores and the
/// visits counted always agree; the hourly and daily roll-ups made from them, with the mark
/// that says where counting stands (`ZoneRollup`); and the heat map's asset-seconds per cell
/// and hour. Kept `analytics.retention`, apart from the event history's limits.
extension StateStore {
    static let analyticsMigration = SQLiteDatabase.Migration(
        "v9-zone-analytics",
        """
        CREATE TABLE zone_transition (seq INTEGER PRIMARY KEY AUTOINCREMENT, zone TEXT NOT NULL,
          asset TEXT NOT NULL, entered INTEGER NOT NULL, time_ns INTEGER NOT NULL);
        CREATE INDEX zone_transition_by_zone ON zone_transition (zone, seq);
        CREATE TABLE zone_rollup (span_s INTEGER NOT NULL, zone TEXT NOT NULL, start_ns INTEGER NOT NULL,
          visits INTEGER NOT NULL, assets INTEGER NOT NULL, occupancy_max INTEGER NOT NULL,
          asset_ms INTEGER NOT NULL, dwell_p50_ms INTEGER, dwell_p90_ms INTEGER, dwell_max_ms INTEGER,
          dwell_bins TEXT NOT NULL, PRIMARY KEY (span_s, zone, start_ns));
        CREATE INDEX zone_rollup_by_start ON zone_rollup (span_s, start_ns);
        CREATE TABLE zone_rollup_mark (id INTEGER PRIMARY KEY CHECK (id = 1), next_hour_ns INTEGER NOT NULL,
          through_seq INTEGER NOT NULL, day_ns INTEGER NOT NULL, day_from_seq INTEGER NOT NULL);
        -- The visits open at the mark's hour (at_day 0) and at its day (at_day 1), by zone: an
        -- answer about one zone reads that zone's.
        CREATE TABLE zone_open (at_day INTEGER NOT NULL, zone TEXT NOT NULL, asset TEXT NOT NULL,
          entered_ns INTEGER NOT NULL, PRIMARY KEY (at_day, zone, asset));
        CREATE TABLE heat_hour (hour_ns INTEGER NOT NULL, level INTEGER NOT NULL, cells TEXT NOT NULL,
          PRIMARY KEY (hour_ns, level));
        """)

    /// Visits counted apart from the live membership (SPEC §10): a transition says which kind
    /// it is, an open visit too (a pallet can be inside by both), and an hour keeps the live
    /// occupancy's asset-seconds apart from the visits' (older rows: the same figure).
    static let visitAnalyticsMigration = SQLiteDatabase.Migration(
        "v12-visit-analytics",
        """
        ALTER TABLE zone_transition ADD COLUMN visit INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE zone_rollup ADD COLUMN occupancy_ms INTEGER;
        CREATE TABLE zone_open_kinds (at_day INTEGER NOT NULL, zone TEXT NOT NULL, asset TEXT NOT NULL,
          entered_ns INTEGER NOT NULL, visit INTEGER NOT NULL, PRIMARY KEY (at_day, zone, asset, visit));
        INSERT INTO zone_open_kinds SELECT at_day, zone, asset, entered_ns, 0 FROM zone_open;
        DROP TABLE zone_open;
        ALTER TABLE zone_open_kinds RENAME TO zone_open;
        """)

    /// Appends transitions in the order given (in `commit`'s transaction).
    static func insert(_ transitions: [ZoneTransition], in db: SQLiteConnection) throws(SQLiteError) {
        guard !transitions.isEmpty else { return }
        let insert = try db.cached(
            "INSERT INTO zone_transition (zone, asset, entered, time_ns, visit) VALUES (?, ?, ?, ?, ?)")
        for t in transitions { try insert.execute([t.zone, t.asset, t.entered, t.time.nanoseconds, t.visit]) }
    }

    /// Transitions made outside an engine's turn (`ZoneRollup.reconcile` at a start).
    public func appendTransitions(_ transitions: [ZoneTransition]) throws {
        guard !transitions.isEmpty else { return }
        try db.write { (db) throws(SQLiteError) in try Self.insert(transitions, in: db) }
    }

    /// Where counting stands (with one zone's open visits only, when given); nil when it
    /// never started.
    public func zoneRollupMark(zone: String? = nil) throws -> ZoneRollup? {
        try db.read { (db) throws(SQLiteError) in try Self.zoneRollupMark(zone: zone, in: db) }
    }

    static func zoneRollupMark(zone: String?, in db: SQLiteConnection) throws(SQLiteError) -> ZoneRollup? {
        guard
            var mark = try db.rows(
                "SELECT next_hour_ns, through_seq, day_ns, day_from_seq FROM zone_rollup_mark", [],
                {
                    ZoneRollup(
                        nextHour: Timestamp(nanoseconds: $0.int64(0)), throughSeq: $0.int64(1), open: [],
                        day: Timestamp(nanoseconds: $0.int64(2)), dayFromSeq: $0.int64(3), dayOpen: [])
                }
            ).first
        else { return nil }
        var sql = "SELECT at_day, zone, asset, entered_ns, visit FROM zone_open"
        var arguments: [any SQLBindable] = []
        if let zone {
            sql += " WHERE zone = ?"
            arguments.append(zone)
        }
        for (atDay, visit) in try db.rows(
            sql + " ORDER BY entered_ns, asset", arguments,
            {
                (
                    $0.int64(0) != 0,
                    ZoneHours.OpenVisit(
                        zone: $0.string(1), asset: $0.string(2), entered: Timestamp(nanoseconds: $0.int64(3)),
                        visit: $0.int64(4) != 0)
                )
            })
        {
            if atDay { mark.dayOpen.append(visit) } else { mark.open.append(visit) }
        }
        return mark
    }

    /// The stored transitions after `seq`, in order; of one zone only when given.
    public func zoneTransitions(after seq: Int64, zone: String? = nil) throws -> [ZoneRollup.Stored] {
        try db.read { (db) throws(SQLiteError) in try Self.zoneTransitions(after: seq, zone: zone, in: db) }
    }

    static func zoneTransitions(after seq: Int64, zone: String?, in db: SQLiteConnection) throws(SQLiteError)
        -> [ZoneRollup.Stored]
    {
        var stored: [ZoneRollup.Stored] = []
        try forEachTransition(after: seq, through: .max, zone: zone, in: db) { stored.append($0) }
        return stored
    }

    /// The last transition stored (0 when none is).
    public func lastZoneTransitionSeq() throws -> Int64 {
        try db.read { (db) throws(SQLiteError) in
            try db.scalarInt64("SELECT MAX(seq) FROM zone_transition") ?? 0
        }
    }

    /// The days' figures, counted from their stored transitions as they are read (of one zone
    /// only when given): a day's transitions are not held at once.
    public func countDays(_ days: [ZoneRollup.Day], zone: String? = nil) throws -> [ZoneBucketStats] {
        try db.read { (db) throws(SQLiteError) in try Self.countDays(days, zone: zone, in: db) }
    }

    static func countDays(_ days: [ZoneRollup.Day], zone: String?, in db: SQLiteConnection) throws(SQLiteError)
        -> [ZoneBucketStats]
    {
        var counter = ZoneRollup.DayCounter(days)
        guard let seqs = counter.seqs else { return [] }
        try forEachTransition(after: seqs.after, through: seqs.through, zone: zone, in: db) { counter.take($0) }
        return counter.finish()
    }

    static func forEachTransition(
        after seq: Int64, through last: Int64, zone: String?, in db: SQLiteConnection,
        _ body: (ZoneRollup.Stored) -> Void
    ) throws(SQLiteError) {
        var sql = "SELECT seq, zone, asset, entered, time_ns, visit FROM zone_transition WHERE seq > ? AND seq <= ?"
        var arguments: [any SQLBindable] = [seq, last]
        if let zone {
            sql += " AND zone = ?"
            arguments.append(zone)
        }
        try db.prepare(sql + " ORDER BY seq").forEachRow(arguments) {
            body(
                ZoneRollup.Stored(
                    seq: $0.int64(0),
                    ZoneTransition(
                        zone: $0.string(1), asset: $0.string(2), entered: $0.int64(3) != 0,
                        time: Timestamp(nanoseconds: $0.int64(4)), visit: $0.int64(5) != 0)))
            return true
        }
    }

    /// Rolls the hours (and days) that ended `settle` before `now` into the roll-ups, at most
    /// `atMost` of them, and forgets what is older than `keepAfter`: what the analytics' tick
    /// does. The hours read the transitions after the rolled ones; a day that closed is
    /// counted from its transitions as they are read, so midnight holds no more than an hour
    /// does. A mark ahead of `now`'s hour (the clock went back) is moved back to it
    /// (`ZoneRollup.reanchor`). Whether the mark moved; nil when counting never started.
    public func rollZones(
        at now: Timestamp, settle: TimeSpan = .seconds(0), keepAfter: Timestamp, atMost: Int = ZoneRollup.catchUpHours
    ) throws -> Bool? {
        guard var mark = try zoneRollupMark() else { return nil }
        if mark.reanchor(at: now) {
            try saveRollup(mark, .init(), keepAfter: keepAfter)
            return true
        }
        let settled = now - settle
        guard settled >= mark.nextHour + ZoneRollup.hour else { return false }
        let (hours, days) = mark.rollHours(try zoneTransitions(after: mark.throughSeq), now: settled, atMost: atMost)
        var rolled = ZoneRollup.Rolled()
        (rolled.hours, rolled.days) = (hours, try countDays(days))
        try saveRollup(mark, rolled, keepAfter: keepAfter)
        try forgetTransitions(through: min(mark.dayFromSeq, mark.throughSeq))
        return true
    }

    /// Rows forgotten per transaction: the engine's turns commit on the same writer, and a day's
    /// transitions deleted at once held it 0.67 s at midnight (577,005 of them); 10,000 take
    /// about 12 ms.
    static let forgetChunk = 10_000

    /// Forgets the transitions both the hours and the day have counted (up to `seq`), a chunk
    /// per transaction, so that the engine's commits go on between them. Counted rows left by a
    /// stop between chunks are harmless (counting reads after the mark) and go at the next roll.
    func forgetTransitions(through seq: Int64, chunk: Int = forgetChunk) throws {
        while try db.write({ (db) throws(SQLiteError) -> Bool in
            try db.execute(
                """
                DELETE FROM zone_transition WHERE seq IN
                  (SELECT seq FROM zone_transition WHERE seq <= ? ORDER BY seq LIMIT ?)
                """, [seq, chunk])
            return db.changes == chunk
        }) {}
    }

    /// Stores what rolling made and where counting now stands, in one transaction, and forgets
    /// the roll-ups and heat from before `keepAfter` (the transitions counted go after, in
    /// chunks: `forgetTransitions`).
    public func saveRollup(_ mark: ZoneRollup, _ rolled: ZoneRollup.Rolled, keepAfter: Timestamp) throws {
        try db.write { (db) throws(SQLiteError) in
            let row = try db.prepare(
                """
                INSERT OR REPLACE INTO zone_rollup (span_s, zone, start_ns, visits, assets, occupancy_max, asset_ms,
                  dwell_p50_ms, dwell_p90_ms, dwell_max_ms, dwell_bins, occupancy_ms)
                  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for (span, stats) in rolled.hours.map({ (ZoneRollup.hour, $0) })
                + rolled.days.map({ (ZoneRollup.dayLength, $0) })
            {
                let figures = ZoneFigures(stats, length: span)
                try row.execute([
                    Int(span.seconds), figures.zone, figures.start.nanoseconds, figures.visits, figures.assets,
                    figures.occupancyMax, Self.millis(figures.assetSeconds), figures.dwellP50.map(Self.millis),
                    figures.dwellP90.map(Self.millis), figures.dwellMax.map(Self.millis), figures.bins.text,
                    Self.millis(figures.occupancySeconds),
                ])
            }
            try db.execute(
                """
                INSERT OR REPLACE INTO zone_rollup_mark (id, next_hour_ns, through_seq, day_ns, day_from_seq)
                  VALUES (1, ?, ?, ?, ?)
                """, [mark.nextHour.nanoseconds, mark.throughSeq, mark.day.nanoseconds, mark.dayFromSeq])
            try db.execute("DELETE FROM zone_open")
            let open = try db.prepare(
                "INSERT OR REPLACE INTO zone_open (at_day, zone, asset, entered_ns, visit) VALUES (?, ?, ?, ?, ?)")
            for (atDay, visits) in [(0, mark.open), (1, mark.dayOpen)] {
                for v in visits { try open.execute([atDay, v.zone, v.asset, v.entered.nanoseconds, v.visit]) }
            }
            try db.execute("DELETE FROM zone_rollup WHERE start_ns < ?", [keepAfter.nanoseconds])
            try db.execute("DELETE FROM heat_hour WHERE hour_ns < ?", [keepAfter.nanoseconds])
            try db.execute("DELETE FROM heat_delta WHERE hour_ns < ?", [keepAfter.nanoseconds])
        }
    }

    /// Stored roll-ups of `span` (an hour or a day) starting in [from, to), of one zone or all,
    /// by zone then start.
    public func zoneFigures(span: TimeSpan, zone: String?, from: Timestamp, to: Timestamp) throws -> [ZoneFigures] {
        try db.read { (db) throws(SQLiteError) in
            try Self.zoneFigures(span: span, zone: zone, from: from, to: to, in: db)
        }
    }

    static func zoneFigures(span: TimeSpan, zone: String?, from: Timestamp, to: Timestamp, in db: SQLiteConnection)
        throws(SQLiteError) -> [ZoneFigures]
    {
        var sql = """
            SELECT zone, start_ns, visits, assets, occupancy_max, asset_ms, dwell_p50_ms, dwell_p90_ms,
              dwell_max_ms, dwell_bins, occupancy_ms FROM zone_rollup WHERE span_s = ? AND start_ns >= ? AND start_ns < ?
            """
        var arguments: [any SQLBindable] = [Int(span.seconds), from.nanoseconds, to.nanoseconds]
        if let zone {
            sql += " AND zone = ?"
            arguments.append(zone)
        }
        return try db.rows(sql + " ORDER BY zone, start_ns", arguments) {
            let assetSeconds = Double($0.int64(5)) / 1000
            let occupancySeconds = Self.seconds($0, 10) ?? assetSeconds
            return ZoneFigures(
                zone: $0.string(0), start: Timestamp(nanoseconds: $0.int64(1)), length: span, visits: $0.int(2),
                assets: $0.int(3), occupancyMean: occupancySeconds / span.seconds, occupancyMax: $0.int(4),
                occupancySeconds: occupancySeconds, assetSeconds: assetSeconds, dwellP50: Self.seconds($0, 6),
                dwellP90: Self.seconds($0, 7),
                dwellMax: Self.seconds($0, 8), bins: DwellBins(text: $0.string(9)))
        }
    }

    /// Adds asset-seconds to the cells of `hour`'s heat map, level by level: appended as a
    /// delta of the cells that changed (a few hundred bytes each 30 s), not the hour's whole
    /// map rewritten (kilobytes by the end of a busy hour, every 30 s: issue 53). The deltas of
    /// hours that have ended are folded into one row per hour and level at the first add of a
    /// later hour.
    public func addHeat(_ heat: HeatMap, hour: Timestamp) throws {
        guard !heat.isEmpty else { return }
        let levels = Dictionary(grouping: heat.seconds, by: { $0.key.level })
        try db.write { (db) throws(SQLiteError) in
            try Self.foldHeat(before: hour, in: db)
            let append = try db.cached("INSERT INTO heat_delta (hour_ns, level, cells) VALUES (?, ?, ?)")
            for (level, cells) in levels {
                var map = HeatMap()
                for (cell, seconds) in cells { map.add(cell: cell, seconds: seconds) }
                try append.execute([hour.nanoseconds, level, map.text])
            }
        }
    }

    /// Folds the deltas of hours before `hour` into their hours' rows.
    static func foldHeat(before hour: Timestamp, in db: SQLiteConnection) throws(SQLiteError) {
        let deltas = try db.rows(
            "SELECT hour_ns, level, cells FROM heat_delta WHERE hour_ns < ?", [hour.nanoseconds]
        ) { (hour: $0.int64(0), level: $0.int(1), cells: $0.string(2)) }
        guard !deltas.isEmpty else { return }
        var folded: [HourLevel: HeatMap] = [:]
        for d in deltas {
            folded[HourLevel(hour: d.hour, level: d.level), default: HeatMap()].merge(
                HeatMap(text: d.cells, level: d.level))
        }
        for (key, delta) in folded {
            var map = HeatMap()
            if let text = try db.scalarString(
                "SELECT cells FROM heat_hour WHERE hour_ns = ? AND level = ?", [key.hour, key.level])
            {
                map = HeatMap(text: text, level: key.level)
            }
            map.merge(delta)
            try db.execute(
                "INSERT OR REPLACE INTO heat_hour (hour_ns, level, cells) VALUES (?, ?, ?)",
                [key.hour, key.level, map.text])
        }
        try db.execute("DELETE FROM heat_delta WHERE hour_ns < ?", [hour.nanoseconds])
    }

    struct HourLevel: Hashable {
        var hour: Int64
        var level: Int
    }

    /// The heat map of the hours starting in [from, to), of one level or all: the folded
    /// hours and the deltas not folded yet.
    public func heat(level: Int?, from: Timestamp, to: Timestamp) throws -> HeatMap {
        try db.read { (db) throws(SQLiteError) in
            var map = HeatMap()
            for table in ["heat_hour", "heat_delta"] {
                var sql = "SELECT level, cells FROM \(table) WHERE hour_ns >= ? AND hour_ns < ?"
                var arguments: [any SQLBindable] = [from.nanoseconds, to.nanoseconds]
                if let level {
                    sql += " AND level = ?"
                    arguments.append(level)
                }
                for hour in try db.rows(sql, arguments, { HeatMap(text: $0.string(1), level: $0.int(0)) }) {
                    map.merge(hour)
                }
            }
            return map
        }
    }

    static func millis(_ seconds: Double) -> Int64 { Int64((seconds * 1000).rounded()) }

    static func seconds(_ row: SQLiteRow, _ column: Int32) -> Double? {
        row.optionalInt64(column).map { Double($0) / 1000 }
    }
}

extension StateStore {
    /// The `zone.visit` events the history holds from `since` on, read back as the visits they
    /// tell: a start closes a counted visit its history has told (with its `left`) rather than
    /// resume it, so a `kill -9` between a visit's telling and its exit's storing (they are
    /// `VisitRules.settleTime` apart) does not tell it twice (issue 61, M3).
    public func toldVisits(since: Timestamp) throws -> [ZoneVisit] {
        let events = try events(
            matching: EventTypeGlob(["zone.visit"]), limit: .max, order: HistoryQuery(since: since))
        return events.compactMap { event in
            guard let json = try? JSONParser.parse(event.body), let data = json["data"],
                let asset = data["asset"]?.stringValue, let zone = data["zone"]?.stringValue,
                let entered = data["entered"]?.stringValue.flatMap(RFC3339.parse),
                let left = data["left"]?.stringValue.flatMap(RFC3339.parse)
            else { return nil }
            return ZoneVisit(asset: asset, zone: zone, entered: entered, left: left)
        }
    }
}
