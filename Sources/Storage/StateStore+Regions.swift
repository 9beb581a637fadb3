import BeaconCore
import Synchronization

extension StateStore {
    /// Makes the saved region states equal to these (every monitored region). Only rows that
    /// changed since the last save are written, so saving after each region event costs what
    /// changed, not the number of regions.
    public func saveRegions(_ snapshots: [RegionSnapshot]) throws {
        try commit([], regions: snapshots)
    }

    /// What a save of region states writes over the rows `saved` last (nil: unknown, so all
    /// are replaced); nil when nothing changed.
    struct RegionRows {
        var current: [StoredRegionKey: RegionSnapshot]
        var changed: [RegionSnapshot]
        var removed: [StoredRegionKey]
        var replaceAll: Bool
        /// A state that a power cut took back would give a second enter after the reboot;
        /// a last-seen time a few seconds old costs nothing: only this needs a synced commit.
        var stateChanged: Bool

        init?(_ snapshots: [RegionSnapshot], over saved: [StoredRegionKey: RegionSnapshot]?) {
            current = Dictionary(snapshots.map { (StoredRegionKey($0), $0) }, uniquingKeysWith: { $1 })
            let previous = saved ?? [:]
            changed = snapshots.filter { previous[StoredRegionKey($0)] != $0 }
            let current = self.current
            removed = previous.keys.filter { current[$0] == nil }
            replaceAll = saved == nil
            guard replaceAll || !changed.isEmpty || !removed.isEmpty else { return nil }
            stateChanged =
                !removed.isEmpty
                || changed.contains { s in
                    previous[StoredRegionKey(s)].map {
                        $0.state != s.state || $0.enteredAt != s.enteredAt || $0.dwellsFired != s.dwellsFired
                            || $0.spec != s.spec
                    } ?? true
                }
        }

        func write(in db: SQLiteConnection) throws(SQLiteError) {
            if replaceAll { try db.execute("DELETE FROM region_state") }
            let upsert = try db.cached(
                """
                INSERT OR REPLACE INTO region_state
                (client, region, spec, state, last_seen_ns, entered_at_ns, dwells_fired)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
            for s in changed {
                try upsert.execute([
                    s.client, s.spec.id, s.spec.json.serialized, s.state.rawValue, s.lastSeen.nanoseconds,
                    s.enteredAt.nanoseconds, s.dwellsFired,
                ])
            }
            let delete = try db.cached("DELETE FROM region_state WHERE client = ? AND region = ?")
            for key in removed { try delete.execute([key.client, key.region]) }
        }
    }

    /// The saved region states. Rows that no longer parse are skipped (and reported).
    public func loadRegions() throws -> (snapshots: [RegionSnapshot], skipped: Int) {
        try db.read { (db) throws(SQLiteError) in
            let rows = try db.rows(
                """
                SELECT client, spec, state, last_seen_ns, entered_at_ns, dwells_fired FROM region_state
                ORDER BY rowid
                """
            ) { row -> RegionSnapshot? in
                guard let spec = Self.regionSpec(row.string(1)), let state = RegionState(rawValue: row.string(2)) else {
                    return nil
                }
                return RegionSnapshot(
                    client: row.string(0), spec: spec, state: state, lastSeen: Timestamp(nanoseconds: row.int64(3)),
                    enteredAt: Timestamp(nanoseconds: row.int64(4)), dwellsFired: row.int(5))
            }
            let snapshots = rows.compactMap { $0 }
            return (snapshots, rows.count - snapshots.count)
        }
    }

    /// A change made to a client's regions through the API: they outlive restarts and are
    /// applied over the configuration file's regions, in the order they were made.
    public enum RegionOverride: Sendable, Equatable {
        case monitor(client: String, region: RegionSpec)
        case remove(client: String, region: String)
    }

    /// Records a region added or replaced (`spec`) or removed (nil) through the API.
    public func saveOverride(_ change: RegionOverride) throws {
        try db.write(patient: true) { (db) throws(SQLiteError) in
            let (client, region, spec): (String, String, String?)
            switch change {
            case let .monitor(c, r): (client, region, spec) = (c, r.id, r.json.serialized)
            case let .remove(c, r): (client, region, spec) = (c, r, nil)
            }
            try db.execute(
                """
                INSERT OR REPLACE INTO api_region (client, region, spec, seq)
                VALUES (?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM api_region))
                """, [client, region, spec])
        }
    }

    /// Forgets the API's change to a region: for a region the file does not have, removing it
    /// needs no record (a removal kept for each would grow with every id a client ever used).
    public func forgetOverride(client: String, region: String) throws {
        try db.write(patient: true) { (db) throws(SQLiteError) in
            try db.execute("DELETE FROM api_region WHERE client = ? AND region = ?", [client, region])
        }
    }

    /// Forgets the removals of regions that the file's `clients` no longer have: they remove
    /// nothing. Returns how many.
    @discardableResult
    public func forgetRemovals(keepingRegionsOf clients: [ClientSpec]) throws -> Int {
        let configured = Set(clients.flatMap { c in c.regions.map { StoredRegionKey(client: c.id, region: $0.id) } })
        return try db.write { (db) throws(SQLiteError) in
            let removals = try db.rows("SELECT client, region FROM api_region WHERE spec IS NULL") {
                StoredRegionKey(client: $0.string(0), region: $0.string(1))
            }
            var forgotten = 0
            for key in removals where !configured.contains(key) {
                try db.execute("DELETE FROM api_region WHERE client = ? AND region = ?", [key.client, key.region])
                forgotten += 1
            }
            return forgotten
        }
    }

    /// The API's region changes, oldest first; unreadable rows are skipped.
    public func loadOverrides() throws -> [RegionOverride] {
        try db.read { (db) throws(SQLiteError) in
            try db.rows("SELECT client, region, spec FROM api_region ORDER BY seq") { row -> RegionOverride? in
                let client = row.string(0)
                guard let text = row.optionalString(2) else { return .remove(client: client, region: row.string(1)) }
                return Self.regionSpec(text).map { .monitor(client: client, region: $0) }
            }.compactMap { $0 }
        }
    }

    /// An alarm switched on or off through the API (`PATCH /v1/alarms/{id}`): it stays so
    /// across restarts until switched again.
    public func saveAlarmFlag(_ alarm: String, active: Bool) throws {
        try db.write(patient: true) { (db) throws(SQLiteError) in
            try db.execute("INSERT OR REPLACE INTO alarm_flag (alarm, active) VALUES (?, ?)", [alarm, active])
        }
    }

    public func loadAlarmFlags() throws -> [String: Bool] {
        try db.read { (db) throws(SQLiteError) in
            var flags: [String: Bool] = [:]
            let rows = try db.rows("SELECT alarm, active FROM alarm_flag") { ($0.string(0), $0.int(1) != 0) }
            for (alarm, active) in rows { flags[alarm] = active }
            return flags
        }
    }

    static func regionSpec(_ text: String) -> RegionSpec? {
        guard let json = try? JSONParser.parse(text) else { return nil }
        return try? RegionSpec(json: json)
    }
}

/// A region's identity in the store: its client and id.
struct StoredRegionKey: Hashable {
    var client: String
    var region: String

    init(_ s: RegionSnapshot) { self.init(client: s.client, region: s.spec.id) }

    init(client: String, region: String) {
        self.client = client
        self.region = region
    }
}
