import BeaconCore
import Synchronization

/// Assets' zone memberships (`AssetSnapshot`): one row per asset inside some zone, its
/// snapshot as JSON (times as decimal nanoseconds, which a JSON number cannot hold exactly).
extension StateStore {
    /// Makes the saved memberships match these, writing only the rows that matter: a change
    /// of zones (or dwell alerts raised), or 30 s more of being heard. A parked cart is heard,
    /// and its estimate jitters, all day; rewriting its row every 5 s would wear a gateway's
    /// SD card for a last-heard time and position that only date and place its exit should it
    /// never be heard after a restart (and it then gets `exit_timeout` from the restart anyway).
    /// Returns the rows written.
    @discardableResult
    public func saveAssets(_ snapshots: [AssetSnapshot]) throws -> Int {
        try commit([], assets: snapshots)
    }

    /// What a save of memberships writes over the rows `saved` last (nil: unknown, so all are
    /// replaced); nil when nothing is worth writing.
    struct AssetRows {
        var kept: [String: AssetSnapshot]
        var changed: [AssetSnapshot]
        var removed: [String]
        var replaceAll: Bool
        /// Zone memberships are what a reboot must not take back (a second zone.enter).
        var zonesChanged: Bool
        var count: Int { changed.count + removed.count }

        init?(
            _ snapshots: [AssetSnapshot], over saved: [String: AssetSnapshot]?, final: Bool = false, tick: Bool = false
        ) {
            let current = Set(snapshots.map(\.asset))
            let previous = saved ?? [:]
            changed = snapshots.filter { s in
                previous[s.asset].map { StateStore.worthWriting(s, over: $0, final: final, tick: tick) } ?? true
            }
            removed = previous.keys.filter { !current.contains($0) }
            replaceAll = saved == nil
            guard replaceAll || !changed.isEmpty || !removed.isEmpty else { return nil }
            let changed = self.changed
            zonesChanged = !removed.isEmpty || changed.contains { s in previous[s.asset]?.zones != s.zones }
            kept = previous.filter { current.contains($0.key) }
            for s in changed { kept[s.asset] = s }
        }

        func write(in db: SQLiteConnection) throws(SQLiteError) {
            if replaceAll { try db.execute("DELETE FROM asset_state") }
            // In place: a replace would delete the row and insert it at the table's end, rewriting
            // its key's index entry and a second page each time.
            let upsert = try db.cached(
                """
                INSERT INTO asset_state (asset, snapshot) VALUES (?, ?)
                  ON CONFLICT (asset) DO UPDATE SET snapshot = excluded.snapshot
                """)
            for s in changed { try upsert.execute([s.asset, StateStore.json(s).serialized]) }
            let delete = try db.cached("DELETE FROM asset_state WHERE asset = ?")
            for asset in removed { try delete.execute([asset]) }
        }
    }

    /// An asset in no zone is written again for being heard only this often: its row keeps
    /// a silent tag's last-seen and position across a restart (SPEC §7.2), and a store's
    /// thousand tags written every minute would wear the card for nothing.
    static let rewriteOutsideAfter = TimeSpan.minutes(5)
    /// What need not be written at once — a position that moved, the last-seen time of an
    /// asset in a zone — is written for all assets together once a minute (the saved position
    /// is then at most a minute old, SPEC §4.4): one commit a minute, not one every few
    /// seconds for whichever asset's minute was up, each rewriting the file's first page and
    /// the table's index for a row or two.
    static let positionEvery = TimeSpan.minutes(1)
    /// A position this close to the saved one is the same place: an estimate jitters by tens of
    /// centimetres all day while its tag lies still.
    static let movedMetres = 0.5

    /// Whether `s` is worth a row's write over what was saved: at once when its zones or its
    /// tag changed (what a restart must not take back); at the minute's `tick` when it moved,
    /// or was heard on in a zone (its exit is dated from it), or has been heard for 5 minutes
    /// since; at the clean stop (`final`) for any change at all.
    static func worthWriting(_ s: AssetSnapshot, over saved: AssetSnapshot, final: Bool = false, tick: Bool = false)
        -> Bool
    {
        if s.zones != saved.zones || s.tag?.differs(from: saved.tag) == true { return true }
        let heard = s.lastHeard - saved.lastHeard
        if final { return moved(s, from: saved) || heard.nanoseconds > 0 }
        guard tick else { return false }
        return moved(s, from: saved) || (!s.zones.isEmpty && heard.nanoseconds > 0) || heard >= rewriteOutsideAfter
    }

    static func moved(_ s: AssetSnapshot, from saved: AssetSnapshot) -> Bool {
        guard let p = s.position else { return false }
        guard let q = saved.position, s.level == saved.level else { return true }
        return (p.x - q.x) * (p.x - q.x) + (p.y - q.y) * (p.y - q.y) >= movedMetres * movedMetres
    }

    /// The saved memberships; rows that no longer parse are skipped (and counted).
    public func loadAssets() throws -> (snapshots: [AssetSnapshot], skipped: Int) {
        try db.read { (db) throws(SQLiteError) in
            let rows = try db.rows("SELECT asset, snapshot FROM asset_state ORDER BY rowid") { row in
                Self.assetSnapshot(asset: row.string(0), text: row.string(1))
            }
            let snapshots = rows.compactMap { $0 }
            // The minute is counted from the oldest position on the disk, not from the first
            // save after the start: otherwise a restart adds its downtime and a minute more to
            // the age of what the disk holds.
            if let oldest = snapshots.map({ $0.tag?.positionAt ?? $0.lastHeard }).min() {
                assetTick.resume(from: oldest)
            }
            return (snapshots, rows.count - snapshots.count)
        }
    }

    static func json(_ s: AssetSnapshot) -> JSONValue {
        .object([
            ("last_heard_ns", .string(String(s.lastHeard.nanoseconds))),
            ("x", s.position.map { .number($0.x) } ?? .null), ("y", s.position.map { .number($0.y) } ?? .null),
            ("level", .number(Double(s.level))), ("accuracy_m", .number(s.accuracy)),
            ("tag", s.tag.map(tagJSON) ?? .null),
            (
                "zones",
                .array(
                    s.zones.map { m in
                        .object([
                            ("zone", .string(m.zone)), ("shape", .string(m.shape)),
                            ("since_ns", .string(String(m.since.nanoseconds))),
                            ("dwell_fired", .array(m.dwellFired.map { .string($0) })),
                        ])
                    })
            ),
        ])
    }

    static func assetSnapshot(asset: String, text: String) -> AssetSnapshot? {
        guard let json = try? JSONParser.parse(text),
            let heard = json["last_heard_ns"]?.stringValue.flatMap(Int64.init),
            let level = json["level"]?.numberValue, let accuracy = json["accuracy_m"]?.numberValue,
            case let .array(zones)? = json["zones"]
        else { return nil }
        var memberships: [AssetSnapshot.Membership] = []
        for z in zones {
            guard let zone = z["zone"]?.stringValue, let shape = z["shape"]?.stringValue,
                let since = z["since_ns"]?.stringValue.flatMap(Int64.init)
            else { return nil }
            guard case let .array(fired)? = z["dwell_fired"] else { return nil }
            memberships.append(
                .init(
                    zone: zone, shape: shape, since: Timestamp(nanoseconds: since),
                    dwellFired: fired.compactMap(\.stringValue)))
        }
        // Rows written before tags were kept have a position and no tag.
        var position: Point?
        if let x = json["x"]?.numberValue, let y = json["y"]?.numberValue { position = Point(x: x, y: y) }
        if position == nil, !memberships.isEmpty { return nil }
        return AssetSnapshot(
            asset: asset, lastHeard: Timestamp(nanoseconds: heard), position: position, level: Int(level),
            accuracy: accuracy, zones: memberships, tag: json["tag"].flatMap(tagSnapshot))
    }

    static func tagJSON(_ t: TagSnapshot) -> JSONValue {
        func ns(_ t: Timestamp?) -> JSONValue { t.map { .string(String($0.nanoseconds)) } ?? .null }
        func int(_ v: Int?) -> JSONValue { v.map { .number(Double($0)) } ?? .null }
        return .object([
            ("battery_mv", int(t.batteryMillivolts)), ("battery_percent", int(t.batteryPercent)),
            ("battery_at_ns", ns(t.batteryAt)), ("temperature_c", t.temperatureC.map { .number($0) } ?? .null),
            ("battery_low", .bool(t.batteryLow)), ("missing_since_ns", ns(t.missingSince)),
            ("missing_last_seen_ns", ns(t.missingLastSeen)), ("pace_ms", int(t.paceMilliseconds)),
            ("position_at_ns", ns(t.positionAt)),
        ])
    }

    static func tagSnapshot(_ json: JSONValue) -> TagSnapshot? {
        guard case .object = json else { return nil }
        func ns(_ key: String) -> Timestamp? {
            json[key]?.stringValue.flatMap(Int64.init).map { Timestamp(nanoseconds: $0) }
        }
        func int(_ key: String) -> Int? { json[key]?.numberValue.map { Int($0) } }
        var t = TagSnapshot()
        (t.batteryMillivolts, t.batteryPercent, t.batteryAt) = (
            int("battery_mv"), int("battery_percent"), ns("battery_at_ns")
        )
        t.temperatureC = json["temperature_c"]?.numberValue
        if case .bool(true)? = json["battery_low"] { t.batteryLow = true }
        (t.missingSince, t.missingLastSeen) = (ns("missing_since_ns"), ns("missing_last_seen_ns"))
        (t.paceMilliseconds, t.positionAt) = (int("pace_ms"), ns("position_at_ns"))
        return t
    }
}

/// The minute's tick of the assets' routine writes (`StateStore.positionEvery`), on the
/// assets' own clock (the newest last-heard time among them), so that a saved state's age is
/// the same in a replay, a test and the daemon.
final class AssetTick: Sendable {
    private let last = Mutex<Timestamp?>(nil)

    /// Counts the first minute from `t` (the oldest position a restart found on the disk),
    /// unless a tick has been counted already.
    func resume(from t: Timestamp) {
        last.withLock { last in if last == nil { last = t } }
    }

    /// Whether a minute has passed since the last tick for these snapshots; starts the next.
    func due(_ snapshots: [AssetSnapshot]) -> Bool {
        guard let newest = snapshots.map(\.lastHeard).max() else { return false }
        return last.withLock { last in
            guard let previous = last else {
                last = newest
                return false
            }
            guard newest - previous >= StateStore.positionEvery else { return false }
            last = newest
            return true
        }
    }
}
