import BeaconCore

extension StatusReport {
    /// `site` in `/v1/status` (SPEC §6.3): the broker, and each gateway of the site as this
    /// one sees it. Absent for a gateway alone.
    public struct Site: Sendable, Equatable {
        public struct Gateway: Sendable, Equatable {
            public var id = ""
            /// Its retained status on the broker; nil before one was seen.
            public var online: Bool?
            public var lastBatch: String?
            public var batches = 0, lost = 0
            /// Its clock minus this gateway's when its last batch arrived.
            public var clockOffsetSeconds: Double?
            public init() {}
        }

        /// The retained `locator` announcement as this gateway last saw it.
        public struct Locator: Sendable, Equatable {
            public var gateway: String
            public var epoch: Int
            public var since: String
            /// This gateway is the locator now (announced, chosen, and connected).
            public var thisGateway: Bool
            public init(gateway: String, epoch: Int, since: String, thisGateway: Bool) {
                self.gateway = gateway
                self.epoch = epoch
                self.since = since
                self.thisGateway = thisGateway
            }
        }

        public var id = "", broker = ""
        public var locator: Locator?
        public var connected = false
        public var reconnects = 0
        public var lastError: String?
        /// Publishes the broker refused (an MQTT 5 PUBACK reason: an ACL), by reason.
        public var publishRefused: [(String, Int)] = []
        /// Other systems' topic filters on which nothing arrived since this gateway connected
        /// (30 s or more ago): their nodes, or a broker ACL that lets nothing through.
        public var silentTopics: [String] = []
        /// This gateway's sightings waiting for the next batch.
        public var queued = 0
        public var batchesSent = 0, sightingsUnsent = 0
        public var batchesReceived = 0, batchesLost = 0, sightingsReceived = 0
        /// Messages refused and records dropped, by reason.
        public var dropped: [(String, Int)] = []
        public var gateways: [Gateway] = []
        /// Receivers of other systems (SPEC §9): what each gave the engine, and when.
        public var foreignReceivers: [ForeignReceiver] = []
        public init() {}

        public struct ForeignReceiver: Sendable, Equatable {
            public var receiver = "", system = "", name = ""
            public var sightings = 0
            public var lastHeard: String?
            public init() {}
        }

        public static func == (a: Site, b: Site) -> Bool { a.json == b.json }
    }
}

extension StatusReport.Site {
    public var json: JSONValue {
        .object([
            ("id", .string(id)),
            (
                "broker",
                .object([
                    ("url", .string(broker)), ("connected", .bool(connected)), ("reconnects", .int(reconnects)),
                    ("last_error", .optional(lastError)),
                    ("publish_refused", .object(publishRefused.map { ($0.0, .int($0.1)) })),
                    ("silent_topics", .array(silentTopics.map { .string($0) })),
                ])
            ),
            (
                "locator",
                locator.map {
                    .object([
                        ("gateway", .string($0.gateway)), ("epoch", .int($0.epoch)), ("since", .string($0.since)),
                        ("this_gateway", .bool($0.thisGateway)),
                    ])
                } ?? .null
            ),
            ("queued", .int(queued)), ("batches_sent", .int(batchesSent)), ("sightings_unsent", .int(sightingsUnsent)),
            ("batches_received", .int(batchesReceived)), ("batches_lost", .int(batchesLost)),
            ("sightings_received", .int(sightingsReceived)), ("dropped", .object(dropped.map { ($0.0, .int($0.1)) })),
            (
                "gateways",
                .array(
                    gateways.map { g in
                        .object([
                            ("id", .string(g.id)), ("online", g.online.map { .bool($0) } ?? .null),
                            ("last_batch", .optional(g.lastBatch)), ("batches", .int(g.batches)),
                            ("lost", .int(g.lost)), ("clock_offset_s", .round(g.clockOffsetSeconds, places: 1000)),
                        ])
                    })
            ),
            (
                "foreign_receivers",
                .array(
                    foreignReceivers.map { r in
                        .object([
                            ("receiver", .string(r.receiver)), ("system", .string(r.system)), ("name", .string(r.name)),
                            ("sightings", .int(r.sightings)), ("last_heard", .optional(r.lastHeard)),
                        ])
                    })
            ),
        ])
    }

    public init(json s: JSONValue) {
        self.init()
        id = s.string("id") ?? ""
        broker = s["broker"]?.string("url") ?? ""
        connected = s["broker"]?.bool("connected") ?? false
        reconnects = s["broker"]?.int("reconnects") ?? 0
        lastError = s["broker"]?.string("last_error")
        if case let .object(members)? = s["broker"]?["publish_refused"] {
            publishRefused = members.map { ($0.0, Int($0.1.numberValue ?? 0)) }
        }
        silentTopics = s["broker"]?.array("silent_topics").compactMap(\.stringValue) ?? []
        if let l = s["locator"], !l.isNull {
            locator = Locator(
                gateway: l.string("gateway") ?? "", epoch: l.int("epoch"), since: l.string("since") ?? "",
                thisGateway: l.bool("this_gateway"))
        }
        (queued, batchesSent, sightingsUnsent) = (s.int("queued"), s.int("batches_sent"), s.int("sightings_unsent"))
        (batchesReceived, batchesLost) = (s.int("batches_received"), s.int("batches_lost"))
        sightingsReceived = s.int("sightings_received")
        if case let .object(members)? = s["dropped"] { dropped = members.map { ($0.0, Int($0.1.numberValue ?? 0)) } }
        gateways = s.array("gateways").map { g in
            var gateway = Gateway()
            gateway.id = g.string("id") ?? ""
            if case let .bool(b)? = g["online"] { gateway.online = b }
            gateway.lastBatch = g.string("last_batch")
            (gateway.batches, gateway.lost) = (g.int("batches"), g.int("lost"))
            gateway.clockOffsetSeconds = g.double("clock_offset_s")
            return gateway
        }
        foreignReceivers = s.array("foreign_receivers").map { r in
            var f = ForeignReceiver()
            (f.receiver, f.system, f.name) = (
                r.string("receiver") ?? "", r.string("system") ?? "", r.string("name") ?? ""
            )
            f.sightings = r.int("sightings")
            f.lastHeard = r.string("last_heard")
            return f
        }
    }
}
