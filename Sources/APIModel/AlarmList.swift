import BeaconCore

/// `GET /v1/alarms` (and the answer to `PATCH /v1/alarms/{id}`, one `Alarm`): each alarm,
/// what fires it and whether it is armed. Read back by `beaconctl alarms`.
public struct AlarmList: Sendable, Equatable {
    public struct Alarm: Sendable, Equatable {
        public var id = ""
        public var zones: [String] = []
        /// `enter`, `exit`, `dwell`.
        public var on: [String] = []
        public var dwell: String?
        /// Nil: every asset.
        public var assets: [String]?
        public var active = false
        public init() {}
    }

    public var alarms: [Alarm] = []
    public init() {}
}

extension AlarmList {
    public var json: JSONValue { .object([("alarms", .array(alarms.map(\.json)))]) }
    public init(json: JSONValue) {
        self.init()
        alarms = json.array("alarms").map(Alarm.init(json:))
    }
}

extension AlarmList.Alarm {
    public var json: JSONValue {
        .object([
            ("id", .string(id)), ("zones", .array(zones.map { .string($0) })), ("on", .array(on.map { .string($0) })),
            ("dwell", .optional(dwell)), ("assets", assets.map { .array($0.map { .string($0) }) } ?? .null),
            ("active", .bool(active)),
        ])
    }

    public init(json: JSONValue) {
        self.init()
        id = json.string("id") ?? ""
        zones = json.array("zones").compactMap(\.stringValue)
        on = json.array("on").compactMap(\.stringValue)
        dwell = json.string("dwell")
        if case let .array(items)? = json["assets"] { assets = items.compactMap(\.stringValue) }
        active = json.bool("active")
    }
}
