import BeaconCore

extension StateStore {
    /// A zone's (or every zone's) figures by hour or by day over [from, to): the stored
    /// roll-ups, and for the hours and the day not rolled yet what the stored transitions give
    /// up to `now` — an answer never waits for the hour to close. Only buckets where something
    /// happened or someone was inside; by zone, then start. Zones are counted apart, so one
    /// zone's answer reads that zone's transitions only.
    /// The figures, the mark and the transitions are read in one transaction: a roll between
    /// the reads would otherwise leave an hour in neither the figures read nor the transitions
    /// after the mark read next (issue 51, item 10).
    public func zoneBuckets(
        zone: String?, span: TimeSpan, from: Timestamp, to: Timestamp, now: Timestamp
    ) throws -> [ZoneFigures] {
        try db.read { (db) throws(SQLiteError) in
            try Self.zoneBuckets(zone: zone, span: span, from: from, to: to, now: now, in: db)
        }
    }

    static func zoneBuckets(
        zone: String?, span: TimeSpan, from: Timestamp, to: Timestamp, now: Timestamp, in db: SQLiteConnection
    ) throws(SQLiteError) -> [ZoneFigures] {
        var rows = try zoneFigures(span: span, zone: zone, from: from, to: to, in: db)
        guard let mark = try zoneRollupMark(zone: zone, in: db),
            to > mark.nextHour || (span == ZoneRollup.dayLength && to > mark.day)
        else {
            return rows
        }
        let (hours, days) = mark.underWayHours(
            try zoneTransitions(after: mark.throughSeq, zone: zone, in: db), now: now)
        var underWay = ZoneRollup.Rolled()
        underWay.hours = hours
        // A day's transitions are counted as they are read, and only when days are asked for
        // or one ended that the analytics have not rolled yet.
        if span == ZoneRollup.dayLength || now >= mark.day + ZoneRollup.dayLength {
            underWay.days = try countDays(days, zone: zone, in: db)
        }
        struct Key: Hashable {
            var zone: String
            var start: Timestamp
        }
        let have = Set(rows.map { Key(zone: $0.zone, start: $0.start) })
        let fresh = (span == ZoneRollup.dayLength ? underWay.days : underWay.hours)
            .filter { $0.hour >= from && $0.hour < to && !have.contains(Key(zone: $0.zone, start: $0.hour)) }
        rows += fresh.map { ZoneFigures($0, length: span) }
        return rows.sorted { ($0.zone, $0.start) < ($1.zone, $1.start) }
    }
}
