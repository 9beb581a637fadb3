/// An asset's zone memberships, saved so that they outlive a restart as region states do
/// (SPEC §3): after `systemctl restart`, an upgrade or a power cut, a cart still parked in the
/// stockroom raises no second `zone.enter`, one that left during the downtime gets its
/// `zone.exit`, and a dwell alert already sent is not sent again. Only assets inside some zone
/// are saved: nothing else could be doubled or missed.
public struct AssetSnapshot: Sendable, Equatable {
    public struct Membership: Sendable, Equatable {
        public var zone: String
        /// The zone's definition as text (`ZoneDefinition.signature`): a zone redefined since
        /// is not restored, and an asset in it is entered afresh.
        public var shape: String
        public var since: Timestamp
        /// Alarms whose dwell alert this visit has raised.
        public var dwellFired: [String]

        public init(zone: String, shape: String, since: Timestamp, dwellFired: [String]) {
            self.zone = zone
            self.shape = shape
            self.since = since
            self.dwellFired = dwellFired
        }
    }

    public var asset: String
    public var lastHeard: Timestamp
    /// The last estimate: where a `zone.exit` for an asset that stays silent says it was.
    public var position: Point
    public var level: Int
    public var accuracy: Double
    public var zones: [Membership]

    public init(
        asset: String, lastHeard: Timestamp, position: Point, level: Int, accuracy: Double, zones: [Membership]
    ) {
        self.asset = asset
        self.lastHeard = lastHeard
        self.position = position
        self.level = level
        self.accuracy = accuracy
        self.zones = zones
    }
}

extension ZoneDefinition {
    /// The zone's shape as text, to tell a saved membership's zone from a redefined one.
    public var signature: String {
        switch shape {
        case let .polygon(level, points):
            return "polygon \(level): " + points.map { "\($0.x) \($0.y)" }.joined(separator: ", ")
        case let .nearReceiver(receiver, within):
            return "near \(receiver) \(within)"
        }
    }
}

extension AssetTracker {
    /// The memberships to save: every asset inside at least one zone.
    public func snapshot() -> [AssetSnapshot] {
        assets.indices.compactMap { a in
            let inside = zones.indices.filter { states[a].zones[$0].inside }
            guard !inside.isEmpty, let heard = states[a].lastHeard, let estimate = states[a].estimate else {
                return nil
            }
            return AssetSnapshot(
                asset: assets[a].id, lastHeard: heard, position: estimate.position, level: estimate.level,
                accuracy: estimate.accuracy,
                zones: inside.map { z in
                    AssetSnapshot.Membership(
                        zone: zones[z].id, shape: definition.zones[z].signature, since: states[a].zones[z].since,
                        dwellFired: states[a].zones[z].dwellFired.map { alarms[$0].id }.sorted())
                })
        }
    }

    /// Puts saved memberships back on the asset of the same id, for zones of the same id and
    /// shape; false when none could be. Times later than `now` (a clock behind the one that
    /// saved them) are taken as `now`. The asset then goes on as if never stopped: its next
    /// fix inside raises nothing, outside an exit; still silent `lostAfter` after the restart
    /// (and after it was last heard), it leaves its zones.
    public mutating func restore(_ snapshot: AssetSnapshot, now: Timestamp) -> Bool {
        guard let a = assets.firstIndex(where: { $0.id == snapshot.asset }) else { return false }
        var names: [String] = []
        for m in snapshot.zones {
            guard let z = definition.zones.firstIndex(where: { $0.id == m.zone }),
                definition.zones[z].signature == m.shape
            else { continue }
            states[a].zones[z].inside = true
            states[a].zones[z].since = min(m.since, now)
            states[a].zones[z].dwellFired = Set(m.dwellFired.compactMap { id in alarms.firstIndex { $0.id == id } })
            names.append(zones[z].id)
        }
        guard !names.isEmpty else { return false }
        let heard = min(snapshot.lastHeard, now)
        states[a].lastHeard = heard
        states[a].estimate = AssetFix(
            asset: snapshot.asset, position: snapshot.position, level: snapshot.level, accuracy: snapshot.accuracy,
            zones: zones.map(\.id).filter(names.contains), receivers: [])
        states[a].estimatedAt = heard
        states[a].hold = .until(now + lostAfter)
        return true
    }
}

/// What the live daemon saves of the engine: region states and assets' zone memberships.
public struct EngineSnapshot: Sendable {
    public var regions: [RegionSnapshot]
    public var assets: [AssetSnapshot]

    public init(regions: [RegionSnapshot], assets: [AssetSnapshot]) {
        self.regions = regions
        self.assets = assets
    }
}

extension BeaconEngine {
    public func savedState() -> EngineSnapshot {
        EngineSnapshot(regions: snapshot(), assets: tracker?.snapshot() ?? [])
    }

    /// Puts an asset's saved zone memberships back (`AssetTracker.restore`).
    @discardableResult
    public mutating func restore(_ asset: AssetSnapshot) -> Bool {
        tracker?.restore(asset, now: now) ?? false
    }
}
