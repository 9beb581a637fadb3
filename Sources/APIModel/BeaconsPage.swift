import BeaconCore

/// `GET /v1/beacons`: one page of the beacons heard recently, most recent first. Written by
/// the daemon, read back by `beaconctl beacons`.
public struct BeaconsPage: Sendable, Equatable {
    /// One beacon with its proximity and what each receiver hears of it.
    public struct Beacon: Sendable, Equatable {
        public var tag: BeaconTag?
        public var proximity = ""
        public var distance: Double?
        public var lastSeen: String?
        public var receivers: [Reading] = []
        public init() {}
    }

    /// One receiver's smoothed RSSI and distance estimate for a beacon.
    public struct Reading: Sendable, Equatable {
        public var receiver = ""
        public var rssi: Double?
        public var distance: Double?
        public var lastSeen: String?
        public init() {}
    }

    public var beacons: [Beacon] = []
    /// All beacons heard within `exit_timeout`, on this page or not.
    public var total = 0
    /// The `offset` of the next page; nil on the last.
    public var next: Int?
    public init() {}
}

extension BeaconsPage {
    public var json: JSONValue {
        .object([
            ("beacons", .array(beacons.map(\.json))), ("total", .int(total)),
            ("next", next.map(JSONValue.int) ?? .null),
        ])
    }

    public init(json: JSONValue) {
        self.init()
        beacons = json.array("beacons").map(Beacon.init(json:))
        total = json.int("total")
        next = json.double("next").map { Int($0) }
    }
}

extension BeaconsPage.Beacon {
    public var json: JSONValue {
        .object([
            ("beacon", tag?.json ?? .null), ("proximity", .string(proximity)), ("distance", .round(distance)),
            ("last_seen", .optional(lastSeen)), ("receivers", .array(receivers.map(\.json))),
        ])
    }

    public init(json: JSONValue) {
        self.init()
        tag = json["beacon"].flatMap(BeaconTag.init(json:))
        proximity = json.string("proximity") ?? ""
        distance = json.double("distance")
        lastSeen = json.string("last_seen")
        receivers = json.array("receivers").map(BeaconsPage.Reading.init(json:))
    }
}

extension BeaconsPage.Reading {
    public var json: JSONValue {
        .object([
            ("receiver", .string(receiver)), ("rssi", .round(rssi, places: 10)), ("distance", .round(distance)),
            ("last_seen", .optional(lastSeen)),
        ])
    }

    public init(json: JSONValue) {
        self.init()
        receiver = json.string("receiver") ?? ""
        rssi = json.double("rssi")
        distance = json.double("distance")
        lastSeen = json.string("last_seen")
    }
}
