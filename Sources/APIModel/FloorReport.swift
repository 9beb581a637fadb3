import BeaconCore

/// `GET /v1/floor` (and `GET /v1/zones`, its `zones`): what the floor view draws besides the
/// assets — outline, levels, receivers with how recently each was heard, zones, the plan
/// image. The page, `beaconctl map` and `beaconctl zones` all read this one shape.
public struct FloorReport: Sendable, Equatable {
    public struct Receiver: Sendable, Equatable {
        public var id = ""
        public var x = 0.0, y = 0.0
        public var level = 0
        public var sightings = 0
        public var lastHeardAgeSeconds = 0.0
        /// Not heard for `silent_after_s`: drawn grey.
        public var silent = false
        public init() {}
    }

    /// A zone: a polygon on a level, or "within N metres of a receiver".
    public struct Zone: Sendable, Equatable {
        public enum Shape: Sendable, Equatable {
            case polygon(level: Int, points: [[Double]])
            case nearReceiver(String, within: Double)
        }
        public var id: String
        public var shape: Shape
        public init(id: String, shape: Shape) {
            self.id = id
            self.shape = shape
        }
    }

    /// Where the floor plan image is served, metres per pixel scale and the origin pixel.
    public struct Image: Sendable, Equatable {
        public var url = "", scale = 0.0
        public var origin: [Double] = []
        public init() {}
    }

    public var floor: [[Double]]?
    public var levels: [Int] = []
    public var receivers: [Receiver] = []
    public var zones: [Zone] = []
    public var silentAfterSeconds = 0.0
    public var image: Image?
    public init() {}
}

extension FloorReport {
    public var json: JSONValue {
        .object([
            ("floor", floor.map { .array($0.map { .array($0.map(JSONValue.number)) }) } ?? .null),
            ("levels", .array(levels.map(JSONValue.int))), ("receivers", .array(receivers.map(\.json))),
            ("zones", Self.json(zones)), ("silent_after_s", .number(silentAfterSeconds)),
            ("image", image?.json ?? .null),
        ])
    }

    public init(json: JSONValue) {
        self.init()
        if let outline = json["floor"], !outline.isNull { floor = Self.points(outline) }
        levels = json.array("levels").compactMap { $0.numberValue.map { Int($0) } }
        receivers = json.array("receivers").map(Receiver.init(json:))
        zones = Self.zones(json: json)
        silentAfterSeconds = json.double("silent_after_s") ?? 0
        if let i = json["image"], !i.isNull { image = Image(json: i) }
    }

    /// `{"zones": [...]}`, as `GET /v1/zones` answers.
    public static func json(_ zones: [Zone]) -> JSONValue { .array(zones.map(\.json)) }
    /// The `zones` of an answer: the floor's or `GET /v1/zones`'.
    public static func zones(json: JSONValue) -> [Zone] { json.array("zones").compactMap(Zone.init(json:)) }

    static func points(_ json: JSONValue) -> [[Double]] {
        guard case let .array(items) = json else { return [] }
        return items.map { point in
            guard case let .array(xy) = point else { return [] }
            return xy.compactMap(\.numberValue)
        }
    }
}

extension FloorReport.Receiver {
    public var json: JSONValue {
        .object([
            ("id", .string(id)), ("x", .number(x)), ("y", .number(y)), ("level", .int(level)),
            ("sightings", .int(sightings)), ("last_heard_age_s", .round(lastHeardAgeSeconds, places: 10)),
            ("silent", .bool(silent)),
        ])
    }

    public init(json: JSONValue) {
        self.init()
        id = json.string("id") ?? ""
        x = json.double("x") ?? 0
        y = json.double("y") ?? 0
        level = json.int("level")
        sightings = json.int("sightings")
        lastHeardAgeSeconds = json.double("last_heard_age_s") ?? 0
        silent = json.bool("silent")
    }
}

extension FloorReport.Zone {
    public var json: JSONValue {
        switch shape {
        case let .polygon(level, points):
            return .object([
                ("id", .string(id)), ("level", .int(level)),
                ("polygon", .array(points.map { .array($0.map(JSONValue.number)) })),
            ])
        case let .nearReceiver(receiver, within):
            return .object([("id", .string(id)), ("receiver", .string(receiver)), ("within", .number(within))])
        }
    }

    /// Nil for a zone with neither shape.
    public init?(json: JSONValue) {
        let id = json.string("id") ?? ""
        if let receiver = json.string("receiver") {
            self.init(id: id, shape: .nearReceiver(receiver, within: json.double("within") ?? 0))
        } else if let level = json.double("level") {
            self.init(id: id, shape: .polygon(level: Int(level), points: FloorReport.points(json["polygon"] ?? .null)))
        } else {
            return nil
        }
    }

    /// How a person reads the shape in a table.
    public var shapeText: String {
        switch shape {
        case let .polygon(level, points): return "polygon on level \(level), \(points.count) points"
        case let .nearReceiver(receiver, within):
            return "within \(JSONValue.number(within).serialized) m of \(receiver)"
        }
    }
}

extension FloorReport.Image {
    public var json: JSONValue {
        .object([("url", .string(url)), ("scale", .number(scale)), ("origin", .array(origin.map(JSONValue.number)))])
    }

    public init(json: JSONValue) {
        self.init()
        url = json.string("url") ?? ""
        scale = json.double("scale") ?? 0
        origin = json.array("origin").compactMap(\.numberValue)
    }
}
