import BeaconCore

extension StatusReport {
    /// An ESPHome Bluetooth proxy this gateway connects to (SPEC §9): whether it is
    /// connected and since when, what it says it is, what it forwards, and why it last failed.
    public struct ESPHomeProxy: Sendable, Equatable {
        public var receiver = ""
        public var host = ""
        public var encrypted = false
        public var connected = false
        public var since: String?
        public var name: String?
        public var model: String?
        public var esphomeVersion: String?
        public var advertisements = 0
        public var advertisementsPerSecond = 0.0
        public var refused = 0
        /// Advertisements over the bound of a proxy a second (`AdvertisementRate`), dropped.
        public var shed = 0
        public var lastError: String?

        public init() {}

        var json: JSONValue {
            .object([
                ("receiver", .string(receiver)), ("host", .string(host)), ("encrypted", .bool(encrypted)),
                ("connected", .bool(connected)), ("since", .optional(since)), ("name", .optional(name)),
                ("model", .optional(model)), ("esphome_version", .optional(esphomeVersion)),
                ("advertisements", .int(advertisements)),
                ("advertisements_per_s", .round(advertisementsPerSecond)), ("refused", .int(refused)),
                ("shed", .int(shed)), ("last_error", .optional(lastError)),
            ])
        }

        init(json p: JSONValue) {
            receiver = p.string("receiver") ?? ""
            host = p.string("host") ?? ""
            encrypted = p.bool("encrypted") ?? false
            connected = p.bool("connected") ?? false
            since = p.string("since")
            name = p.string("name")
            model = p.string("model")
            esphomeVersion = p.string("esphome_version")
            advertisements = p.int("advertisements")
            advertisementsPerSecond = p.double("advertisements_per_s") ?? 0
            refused = p.int("refused")
            shed = p.int("shed")
            lastError = p.string("last_error")
        }
    }
}
