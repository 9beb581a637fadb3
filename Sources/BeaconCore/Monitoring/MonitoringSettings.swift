/// The `monitoring:` section (SPEC §2): how sightings become enter and exit.
public struct MonitoringSettings: Sendable, Equatable {
    /// Regions per client, as CoreLocation limits an app to 20. Default 20.
    public var regionLimit = 20
    /// Sightings at or above `minRSSI`, within `enterWindow`, needed to enter. Default 2.
    public var enterSightings = 2
    /// Default 5 s.
    public var enterWindow = TimeSpan.seconds(5)
    /// No sighting at or above `minRSSI - hysteresisDB` for this long exits. Default 30 s.
    public var exitTimeout = TimeSpan.seconds(30)
    /// Weaker sightings do not count towards an enter. Default -95 dBm.
    public var minRSSI = -95
    /// Once inside, sightings down to `minRSSI - hysteresisDB` keep the region inside. Default 5 dB.
    public var hysteresisDB = 5
    /// Period of `ranging` events and of proximity checks. Default 1 s.
    public var rangingInterval = TimeSpan.seconds(1)

    public init() {}

    /// The weakest RSSI that keeps an inside region inside.
    public var keepInsideRSSI: Int { minRSSI - hysteresisDB }
}

/// One region a client monitors (SPEC §2 `clients[].regions[]`).
public struct RegionSpec: Sendable, Equatable {
    public var id: String
    public var uuid: BeaconUUID
    public var major: UInt16?
    /// Only meaningful with `major`; the config refuses a minor alone.
    public var minor: UInt16?
    public var notifyOnEntry = true
    public var notifyOnExit = true
    /// Dwell alerts, each fired once per visit after being continuously inside this long.
    public var dwell: [TimeSpan] = []
    public var ranging = false

    public init(
        id: String, uuid: BeaconUUID, major: UInt16? = nil, minor: UInt16? = nil, notifyOnEntry: Bool = true,
        notifyOnExit: Bool = true, dwell: [TimeSpan] = [], ranging: Bool = false
    ) {
        self.id = id
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
        self.dwell = dwell.sorted()
        self.ranging = ranging
    }

    /// SPEC §3: uuid matches, and major/minor where the region gives them.
    public func matches(_ id: IBeaconID) -> Bool {
        id.uuid == uuid && (major.map { $0 == id.major } ?? true) && (minor.map { $0 == id.minor } ?? true)
    }
}

/// A receiver's calibration (SPEC §2 `receivers[]`), used for distance.
public struct ReceiverCalibration: Sendable, Equatable {
    /// RSSI at 1 m for this radio; when nil the beacon's own measured power is used.
    public var rssiAt1m: Double?
    public var pathLossExponent: Double

    public init(rssiAt1m: Double? = nil, pathLossExponent: Double = 2.0) {
        self.rssiAt1m = rssiAt1m
        self.pathLossExponent = pathLossExponent
    }
}

/// A client ("app") and the regions it starts with.
public struct ClientSpec: Sendable, Equatable {
    public var id: String
    public var regions: [RegionSpec]
    public init(id: String, regions: [RegionSpec]) {
        self.id = id
        self.regions = regions
    }
}

/// Everything the engine needs from the configuration, as plain values.
public struct EngineConfiguration: Sendable, Equatable {
    public var monitoring = MonitoringSettings()
    public var clients: [ClientSpec] = []
    public var receivers: [String: ReceiverCalibration] = [:]
    /// Receivers' positions, assets, zones and alarms (asset tracking).
    public var site = SiteConfiguration()

    public init(
        monitoring: MonitoringSettings = MonitoringSettings(), clients: [ClientSpec] = [],
        receivers: [String: ReceiverCalibration] = [:], site: SiteConfiguration = SiteConfiguration()
    ) {
        self.monitoring = monitoring
        self.clients = clients
        self.receivers = receivers
        self.site = site
    }
}
