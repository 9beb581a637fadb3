import BeaconCore

/// `GET /v1/tags` (SPEC §7.5): every asset's tag — battery, temperature, movement, pace, when
/// it was last heard and where — worst first: missing ones (longest silent first), then low
/// batteries (lowest first), then the rest by asset. Read back by `beaconctl tags`.
public struct TagList: Sendable, Equatable {
    public struct Tag: Sendable, Equatable {
        public var asset = ""
        public var name: String?
        public var battery: Battery?
        public var temperatureC: Double?
        /// nil for a tag that reports no movement.
        public var moving: Bool?
        public var advertisingIntervalMilliseconds: Int?
        public var lastSeen: String?
        public var lastPosition: Position?
        /// Not heard for its `missing_after`.
        public var missing = false
        /// Below `tags.battery_low`.
        public var batteryLow = false
        public init() {}
    }

    public struct Battery: Sendable, Equatable {
        public var millivolts: Int
        public var percent: Int?
        public var at: String?
        public init(millivolts: Int, percent: Int?, at: String?) {
            (self.millivolts, self.percent, self.at) = (millivolts, percent, at)
        }
    }

    /// Where the tag was last placed, kept after it falls silent.
    public struct Position: Sendable, Equatable {
        public var x = 0.0, y = 0.0
        public var level = 0
        public var zones: [String] = []
        public var at: String?
        public init() {}
    }

    public var tags: [Tag] = []
    public init() {}

    public var json: JSONValue { .object([("tags", .array(tags.map(\.json)))]) }

    public init(json: JSONValue) {
        self.init()
        tags = json.array("tags").map(Tag.init(json:))
    }
}

extension TagList.Tag {
    public var json: JSONValue {
        .object([
            ("asset", .string(asset)), ("name", .optional(name)),
            (
                "battery",
                battery.map { b in
                    .object([
                        ("millivolts", .int(b.millivolts)), ("percent", b.percent.map(JSONValue.int) ?? .null),
                        ("at", .optional(b.at)),
                    ])
                } ?? .null
            ),
            ("temperature_c", .round(temperatureC)), ("moving", moving.map(JSONValue.bool) ?? .null),
            ("advertising_interval_ms", advertisingIntervalMilliseconds.map(JSONValue.int) ?? .null),
            ("last_seen", .optional(lastSeen)), ("last_position", lastPosition?.json ?? .null),
            ("missing", .bool(missing)), ("battery_low", .bool(batteryLow)),
        ])
    }

    public init(json: JSONValue) {
        self.init()
        asset = json.string("asset") ?? ""
        name = json.string("name")
        if let b = json["battery"], !b.isNull {
            battery = TagList.Battery(
                millivolts: b.int("millivolts"), percent: b.double("percent").map { Int($0) }, at: b.string("at"))
        }
        temperatureC = json.double("temperature_c")
        if case let .bool(m)? = json["moving"] { moving = m }
        advertisingIntervalMilliseconds = json.double("advertising_interval_ms").map { Int($0) }
        lastSeen = json.string("last_seen")
        if let p = json["last_position"], !p.isNull { lastPosition = TagList.Position(json: p) }
        missing = json.bool("missing")
        batteryLow = json.bool("battery_low")
    }
}

extension TagList.Position {
    public var json: JSONValue {
        .object([
            ("x", .round(x)), ("y", .round(y)), ("level", .int(level)), ("zones", .array(zones.map { .string($0) })),
            ("at", .optional(at)),
        ])
    }

    public init(json: JSONValue) {
        self.init()
        (x, y, level) = (json.double("x") ?? 0, json.double("y") ?? 0, json.int("level"))
        zones = json.array("zones").compactMap(\.stringValue)
        at = json.string("at")
    }
}
