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
    /// The last estimate: where a `zone.exit` for an asset that stays silent says it was, and
    /// where a missing tag was last (nil: heard, never placed).
    public var position: Point?
    public var level: Int
    public var accuracy: Double
    public var zones: [Membership]
    /// The tag's own state (SPEC §7.2), for every asset heard, in zones or not: a silent
    /// tag's last position and last-seen are what a reboot must not lose.
    public var tag: TagSnapshot?

    public init(
        asset: String, lastHeard: Timestamp, position: Point?, level: Int, accuracy: Double, zones: [Membership],
        tag: TagSnapshot? = nil
    ) {
        self.asset = asset
        self.lastHeard = lastHeard
        self.position = position
        self.level = level
        self.accuracy = accuracy
        self.zones = zones
        self.tag = tag
    }
}

/// What a tag's state keeps across a restart (SPEC §7.2, §7.4): its telemetry, whether its
/// battery was told low, whether it is missing and since when, its pace, when its position
/// was made. A reboot neither tells a low battery or a missing tag twice nor forgets them.
public struct TagSnapshot: Sendable, Equatable {
    public var batteryMillivolts: Int?
    public var batteryPercent: Int?
    public var batteryAt: Timestamp?
    public var temperatureC: Double?
    public var batteryLow = false
    public var missingSince: Timestamp?
    public var missingLastSeen: Timestamp?
    public var paceMilliseconds: Int?
    public var positionAt: Timestamp?

    public init() {}

    /// Worth a write: its alert state changed, or its battery by 50 mV (not every reading).
    public func differs(from saved: TagSnapshot?) -> Bool {
        guard let saved else { return true }
        if batteryLow != saved.batteryLow || missingSince != saved.missingSince { return true }
        switch (batteryMillivolts, saved.batteryMillivolts) {
        case let (a?, b?): return abs(a - b) >= 50
        case (nil, nil): return false
        default: return true
        }
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
    /// What to save: every asset heard, with its zone memberships (empty outside every zone)
    /// and its tag's state.
    public func snapshot() -> [AssetSnapshot] {
        assets.indices.compactMap { a in
            let inside = zones.indices.filter { states[a].zones[$0].inside }
            guard let heard = states[a].lastHeard else { return nil }
            let estimate = states[a].estimate
            // Memberships need the position that decided them.
            let kept = estimate == nil ? [] : inside
            return AssetSnapshot(
                asset: assets[a].id, lastHeard: heard, position: estimate?.position, level: estimate?.level ?? 0,
                accuracy: estimate?.accuracy ?? 0,
                zones: kept.map { z in
                    AssetSnapshot.Membership(
                        zone: zones[z].id, shape: definition.zones[z].signature, since: states[a].zones[z].since,
                        dwellFired: states[a].zones[z].dwellFired.map { alarms[$0].id }.sorted())
                }, tag: tagSnapshot(a))
        }
    }

    func tagSnapshot(_ a: Int) -> TagSnapshot {
        let s = states[a]
        var tag = TagSnapshot()
        (tag.batteryMillivolts, tag.batteryPercent) = (s.telemetry.batteryMillivolts, s.telemetry.batteryPercent)
        (tag.batteryAt, tag.temperatureC, tag.batteryLow) = (
            s.telemetry.batteryAt, s.telemetry.temperatureC, s.batteryLow
        )
        (tag.missingSince, tag.missingLastSeen) = (s.missingSince, s.missingLastSeen)
        tag.paceMilliseconds = s.interval.interval.map { Int($0.nanoseconds / 1_000_000) }
        tag.positionAt = s.estimatedAt
        return tag
    }

    /// Puts a tag's saved state back. A tag not yet missing gets a minute from the restart to
    /// be heard before it can be: the gateway's own downtime is not the tag's silence.
    mutating func restoreTag(_ a: Int, _ snapshot: AssetSnapshot, now: Timestamp) {
        guard let tag = snapshot.tag else { return }
        let heard = min(snapshot.lastHeard, now)
        if states[a].lastHeard == nil { states[a].lastHeard = heard }
        if states[a].estimate == nil, let p = snapshot.position {
            states[a].estimate = AssetFix(
                asset: snapshot.asset, position: p, level: snapshot.level, accuracy: snapshot.accuracy, zones: [],
                receivers: [])
            states[a].estimatedAt = min(tag.positionAt ?? heard, now)
        }
        var t = TagTelemetry()
        (t.batteryMillivolts, t.batteryPercent, t.batteryAt) = (
            tag.batteryMillivolts, tag.batteryPercent, tag.batteryAt
        )
        t.temperatureC = tag.temperatureC
        states[a].telemetry = t
        states[a].batteryLow = tag.batteryLow
        (states[a].missingSince, states[a].missingLastSeen) = (tag.missingSince, tag.missingLastSeen)
        if let pace = tag.paceMilliseconds { states[a].interval.add(gap: .milliseconds(Int64(pace))) }
        states[a].missingNotBefore = now + AssetTracker.missingGraceAfterRestart
    }

    /// A restarted gateway gives its tags this long to be heard before calling them missing.
    public static let missingGraceAfterRestart = TimeSpan.minutes(1)

    /// Puts saved memberships back on the asset of the same id, for zones of the same id and
    /// shape; false when none could be. Times later than `now` (a clock behind the one that
    /// saved them) are taken as `now`. The asset then goes on as if never stopped: its next
    /// fix inside raises nothing, outside an exit; still silent `lostAfter` after the restart
    /// (and after it was last heard), it leaves its zones.
    public mutating func restore(_ snapshot: AssetSnapshot, now: Timestamp) -> Bool {
        guard let a = assetIndex[snapshot.asset] else { return false }
        defer { restoreTag(a, snapshot, now: now) }
        var names: [String] = []
        for m in snapshot.zones {
            guard let z = definition.zones.firstIndex(where: { $0.id == m.zone }),
                definition.zones[z].signature == m.shape
            else { continue }
            states[a].zones[z].restore(since: min(m.since, now))
            states[a].zones[z].dwellFired = Set(m.dwellFired.compactMap { id in alarms.firstIndex { $0.id == id } })
            // Its visit goes on from where the live state says it began (or the analytics
            // counted it from: `resumeCountedVisits`): one visit across the restart, not a
            // second one begun after it.
            states[a].zones[z].visits.resume(since: min(m.since, now), told: false)
            names.append(zones[z].id)
        }
        guard !names.isEmpty, let position = snapshot.position else { return false }
        let heard = min(snapshot.lastHeard, now)
        states[a].lastHeard = heard
        states[a].estimate = AssetFix(
            asset: snapshot.asset, position: position, level: snapshot.level, accuracy: snapshot.accuracy,
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
    /// The last save, at a clean stop: every asset's latest position is written, however
    /// recently the last one was (SPEC §4.4).
    public var final = false

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
