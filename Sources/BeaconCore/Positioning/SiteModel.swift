/// `positioning:` (SPEC §2) and two extensions: receivers' mounting height against the
/// tags' (`tag_height`), and the zone boundary hysteresis.
public struct PositioningSettings: Sendable, Equatable {
    public var publishInterval = TimeSpan.seconds(2)
    public var maxReceivers = 5
    /// m/s; a published position never moves faster than this.
    public var maxSpeed = 2.5
    /// Metres; smaller moves are not published.
    public var minMove = 0.5
    /// Height of the tags above the floor (m). With receivers' `z`, each range is reduced to
    /// its horizontal part before the 2-D fix; nil means no correction.
    public var tagHeight: Double? = nil
    /// Metres: a position must be this far past a zone's edge (half on each side) to change
    /// the zone's state, so a fix jittering on the edge never flaps.
    public var zoneHysteresis = 1.0
    /// The floor's outline (extension): fixes that land outside it are moved to its edge. A
    /// fix outside the building comes from a range error, not from an asset standing there.
    public var floor: [Point]? = nil
    /// How positions are estimated (extension `positioning.estimator`).
    public var estimator = Estimator.bayes

    /// `bayes`: a belief over the floor's cells, moved by a motion model and weighed by every
    /// packet heard (PositionBelief); `least_squares`: a fix from 2 s of smoothed ranges each
    /// tick (Multilateration), which keeps no memory of earlier fixes.
    public enum Estimator: String, Sendable, CaseIterable {
        case bayes
        case leastSquares = "least_squares"
    }
    /// How the assets move, for the Bayes locator's motion model (extension
    /// `positioning.motion`).
    public var motion = Motion.continuous
    /// dB lost to the body of a person carrying the tag, for a receiver right behind them
    /// (extension `positioning.body_loss_db`; 0: tags not carried by people). The Bayes
    /// locator then expects walking tags to be heard weaker from behind than from ahead.
    public var bodyLossDB = 0.0
    /// Extension `positioning.hold_still` (issue 64): a settled belief is held, not moved,
    /// while the tag's readings stay within their noise (`BeliefHold`) — a still tag then
    /// costs a few comparisons a second instead of a pass over the floor, but a tag that
    /// starts to walk is followed a few seconds later. Off unless the site says so.
    public var holdStill = false

    /// `continuous`: may start or stop at any second (robots, forklifts, tags in hands);
    /// `stop_and_go`: stands for tens of seconds between walks (carts, shoppers, staff);
    /// `parked`: stands for minutes or hours between moves (pallets, roll cages, tools), placed
    /// by everything heard since it stopped (`StillAnchor`).
    public enum Motion: String, Sendable, CaseIterable {
        case continuous
        case stopAndGo = "stop_and_go"
        case parked
    }

    public init() {}
}

/// A point on a floor plan, in metres in the site's frame.
public struct Point: Sendable, Equatable {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}

/// A receiver with a known position (SPEC §2 `receivers[]`).
public struct SiteReceiver: Sendable, Equatable {
    public var id: String
    public var position: Point
    public var level: Int
    /// Mounting height (m), when known.
    public var z: Double?

    public init(id: String, position: Point, level: Int, z: Double? = nil) {
        self.id = id
        self.position = position
        self.level = level
        self.z = z
    }
}

/// What identifies an asset's tag in the air.
public enum AssetTag: Sendable, Equatable {
    case ibeacon(uuid: BeaconUUID, major: UInt16?, minor: UInt16?)
    /// Namespace and instance in lower-case hex.
    case eddystone(namespace: String, instance: String)
    /// A radio address in upper case (tags that send no beacon frame).
    case address(String)
    /// A phone's or a watch's key: every resolvable private address it resolves is this asset's
    /// (SPEC §9).
    case irk(IdentityResolvingKey)

    func matches(_ identity: BeaconIdentity) -> Bool {
        switch (self, identity) {
        case let (.ibeacon(uuid, major, minor), .ibeacon(id)):
            return id.uuid == uuid && (major.map { $0 == id.major } ?? true) && (minor.map { $0 == id.minor } ?? true)
        case let (.eddystone(namespace, instance), .eddystone(id)):
            return Hex.encode(id.namespace) == namespace && Hex.encode(id.instance) == instance
        default:
            return false
        }
    }
}

public struct AssetDefinition: Sendable, Equatable {
    public var id: String
    public var tag: AssetTag
    /// Its own `missing_after`, over the site's (`TagRules`).
    public var missingAfter: TimeSpan?
    public init(id: String, tag: AssetTag, missingAfter: TimeSpan? = nil) {
        self.id = id
        self.tag = tag
        self.missingAfter = missingAfter
    }
}

/// `tags:` (SPEC §7.3) as the engine applies it: when a battery is low, when a tag is missing.
public struct TagRules: Sendable, Equatable {
    public var batteryLowMillivolts = 2500
    public var batteryLowPercent = 20
    public var missingAfter = TimeSpan.minutes(10)
    public init() {}

    public func batteryIsLow(millivolts: Int?, percent: Int?) -> Bool {
        if let mv = millivolts, mv < batteryLowMillivolts { return true }
        if let p = percent, p < batteryLowPercent { return true }
        return false
    }

    /// A told battery is re-armed once it has read back above the margin this long, with no
    /// reading under it between: a cell that recovers for a moment when its load stops (or a
    /// tag whose readings flap) is told once, not at every fall (issue 51, item 11: 30 alerts
    /// in 30 s); a battery replaced reads back for good and is told again when it falls.
    public static let rearmAfter = TimeSpan.minutes(10)

    /// Re-armed only this far above the threshold (SPEC §7.4: 100 mV or 5 %), so a battery
    /// that wavers at the threshold is told once per fall, not at each reading.
    public func batteryIsBack(millivolts: Int?, percent: Int?) -> Bool {
        if let mv = millivolts, mv < batteryLowMillivolts + 100 { return false }
        if let p = percent, p < batteryLowPercent + 5 { return false }
        return millivolts != nil || percent != nil
    }
}

public struct ZoneDefinition: Sendable, Equatable {
    public enum Shape: Sendable, Equatable {
        case polygon(level: Int, points: [Point])
        /// Within `within` metres of a receiver, by that receiver's range to the tag.
        case nearReceiver(receiver: String, within: Double)
    }

    public var id: String
    public var shape: Shape
    public init(id: String, shape: Shape) {
        self.id = id
        self.shape = shape
    }
}

public struct AlarmDefinition: Sendable, Equatable {
    /// `flapping` is not configured: it is told for an alarm on enters or exits when its
    /// asset × zone flaps (`ZoneFlapping`).
    public enum Condition: String, Sendable { case enter, exit, dwell, flapping }
    public var id: String
    public var zones: [String]
    public var on: Set<Condition>
    public var dwell: TimeSpan?
    /// nil: every asset.
    public var assets: Set<String>?
    public var active: Bool
    /// How long a crossing is weighed before it is told (`alarms[].confirm`, `ZoneConfirmer`).
    public var confirm: TimeSpan

    /// An alarm that does not say (BENCHMARKS.md "Confirmed alerts": the curve it is chosen on).
    public static let defaultConfirm = TimeSpan.seconds(10)

    public init(
        id: String, zones: [String], on: Set<Condition>, dwell: TimeSpan? = nil, assets: Set<String>? = nil,
        active: Bool = true, confirm: TimeSpan = AlarmDefinition.defaultConfirm
    ) {
        self.confirm = confirm
        self.id = id
        self.zones = zones
        self.on = on
        self.dwell = dwell
        self.assets = assets
        self.active = active
    }
}

/// The site the engine tracks assets on: receivers with positions, assets, zones, alarms.
public struct SiteConfiguration: Sendable, Equatable {
    public var receivers: [SiteReceiver] = []
    public var assets: [AssetDefinition] = []
    public var zones: [ZoneDefinition] = []
    public var alarms: [AlarmDefinition] = []
    public var positioning = PositioningSettings()
    /// The UUID the site's receivers advertise on for `AutoCalibration` (`calibration.uuid`).
    public var calibrationUUID = AutoCalibration.defaultUUID
    public var tags = TagRules()
    /// How stays become visits (`analytics:` visit_lag, rejoin, min_visit).
    public var visits = VisitRules()

    public init(
        receivers: [SiteReceiver] = [], assets: [AssetDefinition] = [], zones: [ZoneDefinition] = [],
        alarms: [AlarmDefinition] = [], positioning: PositioningSettings = PositioningSettings(),
        calibrationUUID: BeaconUUID = AutoCalibration.defaultUUID, tags: TagRules = TagRules(),
        visits: VisitRules = VisitRules()
    ) {
        self.visits = visits
        self.calibrationUUID = calibrationUUID
        self.tags = tags
        self.receivers = receivers
        self.assets = assets
        self.zones = zones
        self.alarms = alarms
        self.positioning = positioning
    }
}
