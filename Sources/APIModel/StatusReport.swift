import BeaconCore

/// `GET /v1/status`: the one definition of its shape. The daemon fills it in and writes it
/// (`json`); `beaconctl status` and `doctor` read it back (`init(json:)`) and use its fields,
/// so a key is spelled once and a renamed one breaks the build, not an operator's check.
/// Reading is lenient: a field an older daemon does not send reads as empty.
public struct StatusReport: Sendable, Equatable {
    public struct Counts: Sendable, Equatable {
        public var sightings = 0, decoded = 0, assetTags = 0, late = 0, stale = 0, clockAhead = 0
        public var engineBehind = 0, beacons = 0, clients = 0, events = 0, eventsHeld = 0, eventsDropped = 0
        public var stateEmptied = 0, streamClients = 0
        /// Asset × zone pairs flapping now (`zone.flapping`, SPEC §10).
        public var zonesFlapping = 0
        public init() {}
    }

    public struct Outbox: Sendable, Equatable {
        public var pending = 0, deadLetters = 0, deadLettersDiscarded = 0
        public var oldest: String?
        public init() {}
    }

    /// A webhook's delivery state (also `GET /v1/webhooks`).
    public struct Webhook: Sendable, Equatable {
        public enum State: String, Sendable { case ok, retrying, disabled }
        public var id = "", url = ""
        public var state = State.ok
        public var pending = 0, deadLetters = 0, deadLettersDiscarded = 0, delivered = 0, failedRequests = 0
        /// Positions waiting in memory (one per asset at most), and those replaced or let go
        /// unsent (SPEC §4.4).
        public var positionsWaiting = 0, positionsConflated = 0
        public var oldest: String?, lastError: String?, lastErrorAt: String?, retryAt: String?, disabled: String?
        public init() {}
    }

    public struct Reserve: Sendable, Equatable {
        public var file: String
        public var bytes: Int
        public var alertsKept: Int
        public init(file: String, bytes: Int, alertsKept: Int) {
            self.file = file
            self.bytes = bytes
            self.alertsKept = alertsKept
        }
    }

    public var gateway = "", version = ""
    public var started: String?
    public var uptimeSeconds = 0.0
    public var configFile: String?, configDigest: String?, configLoadedAt: String?
    public var configNeedsRestart: [String] = []
    /// Sightings from the site simulator (`--simulate`), not BlueZ.
    public var simulated = false
    public var bluezReachable = false
    public var dbusSignals = 0
    /// Receivers of this gateway whose calibration advertisement BlueZ has taken.
    public var advertising: [String] = []
    public var adapters: [AdapterState] = []
    public var engineLastTurn: String?
    public var engineLastTurnAgeSeconds: Double?
    public var sightingsPerSecond = 0.0
    public var counts = Counts()
    public var outbox = Outbox()
    public var webhooks: [Webhook] = []
    public var stateStore: String?, stateStoreError: String?
    public var stateStoreWALBytes: Int?
    /// Bytes this daemon has written to its disk since it started (`/proc/self/io`): its state
    /// file, write-ahead log and checkpoints. Nil where the kernel does not count them.
    public var stateWrittenBytes: Int?
    public var stateReserve: Reserve?
    /// The last warnings and errors logged, as logfmt lines.
    public var lastErrors: [String] = []
    /// Receivers heard with no position, and how many sightings each.
    public var unplacedReceivers: [(String, Int)] = []
    /// The site's broker and gateways (SPEC §6); nil for a gateway alone.
    public var site: Site?
    /// The ESPHome proxies this gateway connects to (SPEC §9).
    public var esphome: [ESPHomeProxy] = []

    public init() {}

    public static func == (a: StatusReport, b: StatusReport) -> Bool { a.json == b.json }
}

extension StatusReport {
    public var json: JSONValue {
        .object([
            ("gateway", .string(gateway)), ("version", .string(version)), ("started", .optional(started)),
            ("uptime_s", .round(uptimeSeconds, places: 10)), ("config_file", .optional(configFile)),
            ("config_digest", .optional(configDigest)), ("config_loaded_at", .optional(configLoadedAt)),
            ("config_needs_restart", .array(configNeedsRestart.map { .string($0) })),
            ("input", .string(simulated ? "simulated" : "bluez")),
            (
                "bluez",
                .object([
                    ("reachable", .bool(bluezReachable)), ("dbus_signals", .int(dbusSignals)),
                    ("advertising", .array(advertising.map(JSONValue.string))),
                ])
            ),
            ("adapters", .array(adapters.map(\.json))),
            (
                "engine",
                .object([
                    ("last_turn", .optional(engineLastTurn)),
                    ("last_turn_age_s", .round(engineLastTurnAgeSeconds, places: 10)),
                ])
            ),
            ("rates", .object([("sightings_per_s", .round(sightingsPerSecond))])),
            ("counts", counts.json), ("outbox", outbox.json), ("webhooks", .array(webhooks.map(\.json))),
            ("state_store", .optional(stateStore)), ("state_store_error", .optional(stateStoreError)),
            ("state_store_wal_bytes", stateStoreWALBytes.map { .int($0) } ?? .null),
            ("state_written_bytes", stateWrittenBytes.map { .int($0) } ?? .null),
            (
                "state_reserve",
                stateReserve.map {
                    .object([
                        ("file", .string($0.file)), ("bytes", .int($0.bytes)), ("alerts_kept", .int($0.alertsKept)),
                    ])
                } ?? .null
            ),
            ("last_errors", .array(lastErrors.map { .string($0) })),
            ("unplaced_receivers", .object(unplacedReceivers.map { ($0.0, .int($0.1)) })),
            ("site", site?.json ?? .null),
            ("esphome", .array(esphome.map(\.json))),
        ])
    }

    public init(json s: JSONValue) {
        self.init()
        gateway = s.string("gateway") ?? ""
        version = s.string("version") ?? ""
        started = s.string("started")
        uptimeSeconds = s.double("uptime_s") ?? 0
        configFile = s.string("config_file")
        configDigest = s.string("config_digest")
        configLoadedAt = s.string("config_loaded_at")
        configNeedsRestart = s.array("config_needs_restart").compactMap(\.stringValue)
        simulated = s.string("input") == "simulated"
        bluezReachable = s["bluez"]?.bool("reachable") ?? false
        dbusSignals = s["bluez"]?.int("dbus_signals") ?? 0
        advertising = (s["bluez"]?.array("advertising") ?? []).compactMap(\.stringValue)
        adapters = s.array("adapters").map(AdapterState.init(json:))
        engineLastTurn = s["engine"]?.string("last_turn")
        engineLastTurnAgeSeconds = s["engine"]?.double("last_turn_age_s")
        sightingsPerSecond = s["rates"]?.double("sightings_per_s") ?? 0
        counts = Counts(json: s["counts"] ?? .null)
        outbox = Outbox(json: s["outbox"] ?? .null)
        webhooks = s.array("webhooks").map(Webhook.init(json:))
        stateStore = s.string("state_store")
        stateStoreError = s.string("state_store_error")
        stateStoreWALBytes = s.double("state_store_wal_bytes").map { Int($0) }
        stateWrittenBytes = s.double("state_written_bytes").map { Int($0) }
        if let r = s["state_reserve"], !r.isNull {
            stateReserve = Reserve(
                file: r.string("file") ?? "", bytes: r.int("bytes"), alertsKept: r.int("alerts_kept"))
        }
        lastErrors = s.array("last_errors").compactMap(\.stringValue)
        if case let .object(members)? = s["unplaced_receivers"] {
            unplacedReceivers = members.map { ($0.0, Int($0.1.numberValue ?? 0)) }
        }
        if let site = s["site"], !site.isNull { self.site = Site(json: site) }
        esphome = s.array("esphome").map(ESPHomeProxy.init(json:))
    }
}

extension StatusReport.Counts {
    var json: JSONValue {
        .object([
            ("sightings", .int(sightings)), ("decoded", .int(decoded)), ("asset_tags", .int(assetTags)),
            ("late", .int(late)), ("stale", .int(stale)), ("clock_ahead", .int(clockAhead)),
            ("engine_behind", .int(engineBehind)), ("beacons", .int(beacons)), ("clients", .int(clients)),
            ("events", .int(events)), ("events_held", .int(eventsHeld)), ("events_dropped", .int(eventsDropped)),
            ("state_emptied", .int(stateEmptied)), ("stream_clients", .int(streamClients)),
            ("zones_flapping", .int(zonesFlapping)),
        ])
    }

    init(json c: JSONValue) {
        self.init()
        (sightings, decoded, assetTags, late) = (
            c.int("sightings"), c.int("decoded"), c.int("asset_tags"), c.int("late")
        )
        (stale, clockAhead, engineBehind) = (c.int("stale"), c.int("clock_ahead"), c.int("engine_behind"))
        (beacons, clients, events) = (c.int("beacons"), c.int("clients"), c.int("events"))
        (eventsHeld, eventsDropped) = (c.int("events_held"), c.int("events_dropped"))
        (stateEmptied, streamClients) = (c.int("state_emptied"), c.int("stream_clients"))
        zonesFlapping = c.int("zones_flapping")
    }
}

extension StatusReport.Outbox {
    var json: JSONValue {
        .object([
            ("pending", .int(pending)), ("dead_letters", .int(deadLetters)),
            ("dead_letters_discarded", .int(deadLettersDiscarded)), ("oldest", .optional(oldest)),
        ])
    }

    init(json o: JSONValue) {
        self.init()
        (pending, deadLetters, deadLettersDiscarded) = (
            o.int("pending"), o.int("dead_letters"), o.int("dead_letters_discarded")
        )
        oldest = o.string("oldest")
    }
}

extension StatusReport.Webhook {
    public var json: JSONValue {
        .object([
            ("id", .string(id)), ("url", .string(url)), ("state", .string(state.rawValue)),
            ("pending", .int(pending)), ("oldest", .optional(oldest)), ("dead_letters", .int(deadLetters)),
            ("dead_letters_discarded", .int(deadLettersDiscarded)), ("delivered", .int(delivered)),
            ("failed_requests", .int(failedRequests)), ("positions_waiting", .int(positionsWaiting)),
            ("positions_conflated", .int(positionsConflated)), ("last_error", .optional(lastError)),
            ("last_error_at", .optional(lastErrorAt)), ("retry_at", .optional(retryAt)),
            ("disabled", .optional(disabled)),
        ])
    }

    public init(json w: JSONValue) {
        self.init()
        id = w.string("id") ?? "?"
        url = w.string("url") ?? ""
        state = w.string("state").flatMap(State.init(rawValue:)) ?? .ok
        (pending, deadLetters, deadLettersDiscarded) = (
            w.int("pending"), w.int("dead_letters"), w.int("dead_letters_discarded")
        )
        (delivered, failedRequests) = (w.int("delivered"), w.int("failed_requests"))
        (positionsWaiting, positionsConflated) = (w.int("positions_waiting"), w.int("positions_conflated"))
        (oldest, lastError, lastErrorAt) = (w.string("oldest"), w.string("last_error"), w.string("last_error_at"))
        (retryAt, disabled) = (w.string("retry_at"), w.string("disabled"))
    }
}
