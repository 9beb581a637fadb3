/// Something the engine tells the world, at the time of the sighting or timer that caused it.
///
/// Events carry no id: the runtime stamps ids (`EventIDGenerator`) when it publishes, so the
/// engine stays a pure function of its inputs and tests can compare events with `==`.
public struct Event: Sendable, Equatable {
    public var time: Timestamp
    public var payload: EventPayload

    public init(time: Timestamp, payload: EventPayload) {
        self.time = time
        self.payload = payload
    }
}

public enum RegionState: String, Sendable, Equatable {
    case unknown, inside, outside
}

public enum Proximity: String, Sendable, Equatable {
    case immediate, near, far, unknown

    /// SPEC §3: immediate < 0.5 m, near < 3 m, far beyond; unknown without a recent reading.
    public init(distance: Double?) {
        guard let d = distance else {
            self = .unknown
            return
        }
        self = d < 0.5 ? .immediate : (d < 3.0 ? .near : .far)
    }
}

/// Why a region cannot be monitored. The raw value is the stable `reason` / API error code.
public enum RegionFailure: String, Sendable, Equatable, Error {
    case regionLimitExceeded = "region_limit_exceeded"
    case regionNotFound = "region_not_found"
}

/// One beacon in a `ranging` event.
public struct RangedBeacon: Sendable, Equatable {
    public var beacon: IBeaconID
    public var rssi: Double
    public var distance: Double?
    public var proximity: Proximity
    public var receiver: String

    public init(beacon: IBeaconID, rssi: Double, distance: Double?, proximity: Proximity, receiver: String) {
        self.beacon = beacon
        self.rssi = rssi
        self.distance = distance
        self.proximity = proximity
        self.receiver = receiver
    }
}

public enum EventPayload: Sendable, Equatable {
    case regionState(client: String, region: String, state: RegionState)
    case regionEnter(client: String, region: String, beacon: IBeaconID, receiver: String, rssi: Int, distance: Double?)
    case regionExit(client: String, region: String, lastSeen: Timestamp, duration: TimeSpan)
    case regionDwell(client: String, region: String, dwell: TimeSpan)
    case regionFailed(client: String, region: String, reason: RegionFailure)
    case ranging(client: String, region: String, beacons: [RangedBeacon])
    case beaconProximity(beacon: BeaconIdentity, proximity: Proximity, distance: Double?)
    /// An adapter appeared, disappeared, powered on or off, or started or stopped discovering.
    case adapterState(adapter: String, present: Bool, powered: Bool, discovering: Bool)
    /// An asset's estimated position (published when it moved at least `min_move`).
    case assetPosition(AssetFix)
    /// An active alarm's condition for an asset in a zone.
    case zone(ZoneAlert)
    /// A tag's own condition: its battery low, missing, found again (SPEC §7.4).
    case tag(TagAlert)
    /// A visit to a zone that has closed (SPEC §10), whatever the alarms.
    case zoneVisit(ZoneVisit)

    /// Every kind an event can have, for checking a configuration's type globs.
    public static let allKinds = [
        "region.state", "region.enter", "region.exit", "region.dwell", "region.failed", "ranging", "beacon.proximity",
        "adapter.state", "asset.position", "zone.enter", "zone.exit", "zone.dwell", "asset.battery_low",
        "asset.missing", "asset.found", "zone.visit", "zone.flapping",
    ]

    /// The CloudEvents type suffix: `beacond.<kind>`.
    public var kind: String {
        switch self {
        case .regionState: return "region.state"
        case .regionEnter: return "region.enter"
        case .regionExit: return "region.exit"
        case .regionDwell: return "region.dwell"
        case .regionFailed: return "region.failed"
        case .ranging: return "ranging"
        case .beaconProximity: return "beacon.proximity"
        case .adapterState: return "adapter.state"
        case .assetPosition: return "asset.position"
        case let .zone(alert): return "zone.\(alert.condition.rawValue)"
        case let .tag(alert): return "asset.\(alert.condition.rawValue)"
        case .zoneVisit: return "zone.visit"
        }
    }
}

/// Where an asset is: the `asset.position` event's data and `GET /v1/assets`.
public struct AssetFix: Sendable, Equatable {
    public var asset: String
    public var position: Point
    public var level: Int
    public var accuracy: Double
    /// Zones the asset is in (as its zones' alarms told it, SPEC §10), in configuration order.
    public var zones: [String]
    /// Receivers whose ranges made the fix, strongest first.
    public var receivers: [String]
    /// Zones it flaps in (`zone.flapping`): Home Assistant's tracker shows them among its
    /// attributes, `GET /v1/assets` beside `zones`.
    public var flapping: [String] = []
    /// Whether it moves (nil: its site does not anchor still tags, `motion` is not `parked`):
    /// a still tag's position is everything heard since it stopped (`StillAnchor`).
    public var moving: Bool?

    public init(asset: String, position: Point, level: Int, accuracy: Double, zones: [String], receivers: [String]) {
        self.asset = asset
        self.position = position
        self.level = level
        self.accuracy = accuracy
        self.zones = zones
        self.receivers = receivers
    }
}

/// `zone.enter`, `zone.exit`, `zone.dwell`, `zone.flapping`.
public struct ZoneAlert: Sendable, Equatable {
    /// `zone.flapping`'s own data: since when, how many changes, and once it has settled,
    /// the membership it settled on (nil while it flaps).
    public struct Flap: Sendable, Equatable {
        public var since: Timestamp
        public var changes: Int
        public var settled: Bool?

        public init(since: Timestamp, changes: Int, settled: Bool?) {
            (self.since, self.changes, self.settled) = (since, changes, settled)
        }
    }

    public var alarm: String
    public var asset: String
    public var zone: String
    public var condition: AlarmDefinition.Condition
    /// The position that decided it (the last known one for an asset that went silent).
    public var position: Point?
    public var level: Int?
    /// For dwell: how long the asset has been in the zone.
    public var dwell: TimeSpan?
    /// For enter and exit: when the asset crossed (the event's time is when that was decided,
    /// `confirm` later; SPEC §10). For dwell: when it entered.
    public var crossedAt: Timestamp?
    public var flap: Flap?

    public init(
        alarm: String, asset: String, zone: String, condition: AlarmDefinition.Condition, position: Point?,
        level: Int?, dwell: TimeSpan? = nil, crossedAt: Timestamp? = nil, flap: Flap? = nil
    ) {
        self.crossedAt = crossedAt
        self.flap = flap
        self.alarm = alarm
        self.asset = asset
        self.zone = zone
        self.condition = condition
        self.position = position
        self.level = level
        self.dwell = dwell
    }
}
