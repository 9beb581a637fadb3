import BeaconCore

/// `GET /v1/assets` (and `/v1/assets/{id}`, one `Asset`): each configured asset with its
/// latest fix, zones and last sighting. Read back by `beaconctl assets` and `map`.
public struct AssetList: Sendable, Equatable {
    public struct Asset: Sendable, Equatable {
        public var id = ""
        public var name: String?
        public var tag: BeaconTag?
        public var position: Position?
        public var zones: [String] = []
        /// The zones it flaps in now (`zone.flapping`): shown as `zones` last told them.
        public var flapping: [String] = []
        /// Whether it moves, and since when it moves or stands (nil: the site's `motion` is
        /// not `parked`, or it was never placed).
        public var moving: Bool?
        public var motionSince: String?
        public var lastSeen: String?
        public init() {}
    }

    /// A fix: where, on which level, how sure (metres), from which receivers.
    public struct Position: Sendable, Equatable {
        public var x = 0.0, y = 0.0
        public var level = 0
        public var accuracy = 0.0
        public var receiversUsed: [String] = []
        public init() {}
    }

    public var assets: [Asset] = []
    public init() {}
}

extension AssetList {
    public var json: JSONValue { .object([("assets", .array(assets.map(\.json)))]) }
    public init(json: JSONValue) {
        self.init()
        assets = json.array("assets").map(Asset.init(json:))
    }
}

extension AssetList.Asset {
    public var json: JSONValue {
        .object([
            ("id", .string(id)), ("name", .optional(name)), ("beacon", tag?.json ?? .null),
            ("position", position?.json ?? .null), ("zones", .array(zones.map { .string($0) })),
            ("flapping", .array(flapping.map { .string($0) })), ("moving", moving.map { .bool($0) } ?? .null),
            ("motion_since", .optional(motionSince)), ("last_seen", .optional(lastSeen)),
        ])
    }

    public init(json: JSONValue) {
        self.init()
        id = json.string("id") ?? ""
        name = json.string("name")
        tag = json["beacon"].flatMap(BeaconTag.init(json:))
        if let p = json["position"], !p.isNull { position = AssetList.Position(json: p) }
        zones = json.array("zones").compactMap(\.stringValue)
        flapping = json.array("flapping").compactMap(\.stringValue)
        if case let .bool(b)? = json["moving"] { moving = b }
        motionSince = json.string("motion_since")
        lastSeen = json.string("last_seen")
    }
}

extension AssetList.Position {
    public var json: JSONValue {
        .object([
            ("x", .round(x)), ("y", .round(y)), ("level", .int(level)), ("accuracy_m", .round(accuracy)),
            ("receivers_used", .array(receiversUsed.map { .string($0) })),
        ])
    }

    public init(json: JSONValue) {
        self.init()
        x = json.double("x") ?? 0
        y = json.double("y") ?? 0
        level = json.int("level")
        accuracy = json.double("accuracy_m") ?? 0
        receiversUsed = json.array("receivers_used").compactMap(\.stringValue)
    }
}
