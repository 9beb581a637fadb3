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
        let current = Set(snapshots.map(\.asset))
        return try savedAssets.withLock { cache in
            let db = try self.db
            let generation = db.generation
            let saved = cache.rows(in: generation)
            let previous = saved ?? [:]
            let changed = snapshots.filter { s in previous[s.asset].map { Self.worthWriting(s, over: $0) } ?? true }
            let removed = previous.keys.filter { !current.contains($0) }
            guard saved == nil || !changed.isEmpty || !removed.isEmpty else { return 0 }
            // Zone memberships are what a reboot must not take back (a second zone.enter).
            let zonesChanged = !removed.isEmpty || changed.contains { s in previous[s.asset]?.zones != s.zones }
            try db.write(synced: zonesChanged) { (db) throws(SQLiteError) in
                if saved == nil { try db.execute("DELETE FROM asset_state") }
                let upsert = try db.prepare("INSERT OR REPLACE INTO asset_state (asset, snapshot) VALUES (?, ?)")
                for s in changed { try upsert.execute([s.asset, Self.json(s).serialized]) }
                let delete = try db.prepare("DELETE FROM asset_state WHERE asset = ?")
                for asset in removed { try delete.execute([asset]) }
            }
            var kept = previous.filter { current.contains($0.key) }
            for s in changed { kept[s.asset] = s }
            // Emptied while it wrote (found corrupt): everything is written again next time.
            cache = db.generation == generation ? SavedRows(rows: kept, generation: generation) : nil
            return changed.count + removed.count
        }
    }

    static let rewriteAfter = TimeSpan.seconds(30)

    static func worthWriting(_ s: AssetSnapshot, over saved: AssetSnapshot) -> Bool {
        s.zones != saved.zones || s.lastHeard - saved.lastHeard >= rewriteAfter
    }

    /// The saved memberships; rows that no longer parse are skipped (and counted).
    public func loadAssets() throws -> (snapshots: [AssetSnapshot], skipped: Int) {
        try db.read { (db) throws(SQLiteError) in
            let rows = try db.rows("SELECT asset, snapshot FROM asset_state ORDER BY rowid") { row in
                Self.assetSnapshot(asset: row.string(0), text: row.string(1))
            }
            let snapshots = rows.compactMap { $0 }
            return (snapshots, rows.count - snapshots.count)
        }
    }

    static func json(_ s: AssetSnapshot) -> JSONValue {
        .object([
            ("last_heard_ns", .string(String(s.lastHeard.nanoseconds))), ("x", .number(s.position.x)),
            ("y", .number(s.position.y)), ("level", .number(Double(s.level))), ("accuracy_m", .number(s.accuracy)),
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
            let x = json["x"]?.numberValue, let y = json["y"]?.numberValue, let level = json["level"]?.numberValue,
            let accuracy = json["accuracy_m"]?.numberValue,
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
        return AssetSnapshot(
            asset: asset, lastHeard: Timestamp(nanoseconds: heard), position: Point(x: x, y: y), level: Int(level),
            accuracy: accuracy, zones: memberships)
    }
}
