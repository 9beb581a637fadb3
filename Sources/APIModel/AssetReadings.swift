import BeaconCore

/// `GET /v1/assets/{id}/readings`: what each receiver hears of an asset now, with where the
/// receiver stands: the raw material of `beaconctl calibrate record`.
public struct AssetReadings: Sendable, Equatable {
    public struct Reading: Sendable, Equatable {
        public var receiver = ""
        public var rssi = 0.0
        public var ageSeconds = 0.0
        public var x = 0.0, y = 0.0
        /// The receiver's height, when the file gives it.
        public var z: Double?
        public var level = 0
        public init() {}
    }

    public var asset = ""
    public var readings: [Reading] = []
    public init() {}

    public var json: JSONValue {
        .object([("asset", .string(asset)), ("readings", .array(readings.map(\.json)))])
    }

    public init(json: JSONValue) {
        self.init()
        asset = json.string("asset") ?? ""
        readings = json.array("readings").map(Reading.init(json:))
    }
}

extension AssetReadings.Reading {
    public var json: JSONValue {
        .object([
            ("receiver", .string(receiver)), ("rssi", .round(rssi, places: 10)),
            ("age_s", .round(ageSeconds, places: 1000)),
            (
                "position",
                .object([
                    ("x", .number(x)), ("y", .number(y)), ("z", z.map(JSONValue.number) ?? .null),
                    ("level", .int(level)),
                ])
            ),
        ])
    }

    public init(json: JSONValue) {
        self.init()
        receiver = json.string("receiver") ?? ""
        rssi = json.double("rssi") ?? 0
        ageSeconds = json.double("age_s") ?? 0
        let p = json["position"] ?? .null
        (x, y, z, level) = (p.double("x") ?? 0, p.double("y") ?? 0, p.double("z"), p.int("level"))
    }
}

/// `GET /v1/reachability`: each destination the daemon sends to, and whether it took a
/// connection, checked from the daemon's own process (its network namespace, its unit's
/// firewall). Read back by `beaconctl doctor`.
public struct ReachabilityReport: Sendable, Equatable {
    public struct Destination: Sendable, Equatable {
        /// `webhook` or `broker`.
        public var kind = "", id = "", url = ""
        public var host: String?, port: String?
        /// Why it took no connection; nil when it did.
        public var error: String?
        public init() {}
    }

    public var pid = 0
    public var systemdUnit: String?
    public var destinations: [Destination] = []
    public init() {}

    public var json: JSONValue {
        .object([
            ("checked_from", .object([("pid", .int(pid)), ("systemd_unit", .optional(systemdUnit))])),
            ("destinations", .array(destinations.map(\.json))),
        ])
    }

    public init(json: JSONValue) {
        self.init()
        pid = json["checked_from"]?.int("pid") ?? 0
        systemdUnit = json["checked_from"]?.string("systemd_unit")
        destinations = json.array("destinations").map(Destination.init(json:))
    }
}

extension ReachabilityReport.Destination {
    public var json: JSONValue {
        .object([
            ("kind", .string(kind)), ("id", .string(id)), ("url", .string(url)), ("host", .optional(host)),
            ("port", .optional(port)), ("reachable", .bool(error == nil)), ("error", .optional(error)),
        ])
    }

    public init(json: JSONValue) {
        self.init()
        (kind, id, url) = (json.string("kind") ?? "", json.string("id") ?? "", json.string("url") ?? "")
        (host, port, error) = (json.string("host"), json.string("port"), json.string("error"))
    }
}
