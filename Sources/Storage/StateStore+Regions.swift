import BeaconCore
import GRDB
import Synchronization

extension StateStore {
    /// Makes the saved region states equal to these (every monitored region). Only rows that
    /// changed since the last save are written, so saving after each region event costs what
    /// changed, not the number of regions.
    public func saveRegions(_ snapshots: [RegionSnapshot]) throws {
        let current = Dictionary(snapshots.map { (RegionKey($0), $0) }, uniquingKeysWith: { $1 })
        try savedRegions.withLock { saved in
            let previous = saved ?? [:]
            let changed = snapshots.filter { previous[RegionKey($0)] != $0 }
            let removed = previous.keys.filter { current[$0] == nil }
            guard saved == nil || !changed.isEmpty || !removed.isEmpty else { return }
            try db.write { db in
                if saved == nil { try db.execute(sql: "DELETE FROM region_state") }
                let upsert = try db.makeStatement(
                    sql: """
                        INSERT OR REPLACE INTO region_state
                        (client, region, spec, state, last_seen_ns, entered_at_ns, dwells_fired)
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        """)
                for s in changed {
                    try upsert.execute(arguments: [
                        s.client, s.spec.id, s.spec.json.serialized, s.state.rawValue, s.lastSeen.nanoseconds,
                        s.enteredAt.nanoseconds, s.dwellsFired,
                    ])
                }
                let delete = try db.makeStatement(sql: "DELETE FROM region_state WHERE client = ? AND region = ?")
                for key in removed { try delete.execute(arguments: [key.client, key.region]) }
            }
            saved = current
        }
    }

    /// The saved region states. Rows that no longer parse are skipped (and reported).
    public func loadRegions() throws -> (snapshots: [RegionSnapshot], skipped: Int) {
        try db.read { db in
            var out: [RegionSnapshot] = []
            var skipped = 0
            for row in try Row.fetchAll(db, sql: "SELECT * FROM region_state ORDER BY rowid") {
                guard let spec = Self.regionSpec(row["spec"]), let state = RegionState(rawValue: row["state"]) else {
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

    /// A change made to a client's regions through the API: they outlive restarts and are
    /// applied over the configuration file's regions, in the order they were made.
    public enum RegionOverride: Sendable, Equatable {
        case monitor(client: String, region: RegionSpec)
        case remove(client: String, region: String)
    }

    /// Records a region added or replaced (`spec`) or removed (nil) through the API.
    public func saveOverride(_ change: RegionOverride) throws {
        try db.write { db in
            let (client, region, spec): (String, String, String?)
            switch change {
            case let .monitor(c, r): (client, region, spec) = (c, r.id, r.json.serialized)
            case let .remove(c, r): (client, region, spec) = (c, r, nil)
            }
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO api_region (client, region, spec, seq)
                    VALUES (?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM api_region))
                    """, arguments: [client, region, spec])
        }
    }

    /// The API's region changes, oldest first; unreadable rows are skipped.
    public func loadOverrides() throws -> [RegionOverride] {
        try db.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM api_region ORDER BY seq").compactMap { row in
                let client: String = row["client"]
                guard let text: String = row["spec"] else { return .remove(client: client, region: row["region"]) }
                return Self.regionSpec(text).map { .monitor(client: client, region: $0) }
            }
        }
    }

    /// An alarm switched on or off through the API (`PATCH /v1/alarms/{id}`): it stays so
    /// across restarts until switched again.
    public func saveAlarmFlag(_ alarm: String, active: Bool) throws {
        try db.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO alarm_flag (alarm, active) VALUES (?, ?)", arguments: [alarm, active])
        }
    }

    public func loadAlarmFlags() throws -> [String: Bool] {
        try db.read { db in
            var flags: [String: Bool] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT alarm, active FROM alarm_flag") {
                flags[row["alarm"]] = row["active"]
            }
            return flags
        }
    }

    static func regionSpec(_ text: String) -> RegionSpec? {
        guard let json = try? JSONParser.parse(text) else { return nil }
        return try? RegionSpec(json: json)
    }
}

/// A region's identity in the store: its client and id.
struct RegionKey: Hashable {
    var client: String
    var region: String

    init(_ s: RegionSnapshot) {
        client = s.client
        region = s.spec.id
    }
}
