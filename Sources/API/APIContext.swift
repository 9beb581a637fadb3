import APIModel
import BeaconConfig
import BeaconCore
import BeaconRuntime
import HTTPServer
import Logging
import Logs
import Publishing
import Storage
import Synchronization

/// What the daemon knows outside the engine, for `/v1/status` and `/metrics`: adapters,
/// BlueZ reachability, D-Bus counters. Filled in by the daemon's adapters.
public struct RuntimeStatus: Sendable {
    public var adapters: [AdapterState] = []
    /// The file the daemon runs from (absolute), for `beaconctl doctor` to check that one.
    public var configFile: String?
    /// `ConfigDigest` of the text the running configuration was loaded from, when, and the
    /// sections a reload left for a restart (`gateway`, `api`).
    public var configDigest: String?
    public var configLoadedAt: Timestamp?
    public var configNeedsRestart: [String] = []
    /// `--simulate`: sightings come from the site simulator; BlueZ is not used.
    public var simulated = false
    public var bluezReachable = false
    public var dbusSignals = 0
    public var dbusReconnects = 0
    /// The receivers whose calibration advertisement BlueZ has taken (`calibration.advertise`).
    public var advertising: [String] = []
    /// The state directory's disk reserve (`DiskReserve`): its file, size and the alerts it
    /// keeps now; nil when it could not be made.
    public var stateReserve: (file: String, bytes: Int, alerts: Int)?
    /// The site's broker and gateways (`SiteLink`); nil for a gateway alone.
    public var site: StatusReport.Site?
    /// The ESPHome proxies this gateway connects to (`ESPHomeProxies`).
    public var esphome: [StatusReport.ESPHomeProxy] = []
    /// Reloads (SIGHUP) applied and refused since the start.
    public var reloadsApplied = 0
    public var reloadsRefused = 0

    public init() {}
}

/// The last warnings and errors the daemon logged, for `/v1/status` and `beaconctl status`:
/// an operator asking "what is wrong" should not need the journal.
public final class RecentErrors: Sendable {
    private let lines = Mutex<[String]>([])
    public static let kept = 10

    public init() {}

    public func record(_ line: String) {
        lines.withLock {
            $0.append(line)
            if $0.count > RecentErrors.kept { $0.removeFirst($0.count - RecentErrors.kept) }
        }
    }

    public var all: [String] { lines.withLock { $0 } }
}

/// Everything the API reads or changes. The engine is reached only through `LiveEngine`
/// (its own thread); the store is read directly (WAL readers never block the writer).
public struct APIContext: Sendable {
    /// The running configuration (it changes on reload).
    public var config: Config { configuration() }
    public var configuration: @Sendable () -> Config
    public var version: String
    public var started: Timestamp
    public var engine: LiveEngine
    public var store: StateStore?
    public var publisher: EventPublisher
    public var webhooks: [WebhookWorker] { publisher.workers }
    public var runtime: @Sendable () -> RuntimeStatus
    public var errors: RecentErrors
    public var clock: @Sendable () -> Timestamp
    /// Remote sightings, handed to the engine like the local adapters' batches; false when it
    /// is too far behind to take them.
    public var ingest: @Sendable ([Sighting]) -> Bool
    /// The daemon's log (the journal, and `errors` for warnings).
    public var logger: Logger
    /// Relays already warned about, so that one posting every second logs once, not always.
    let relayWarnings = RelayWarnings()
    /// The read-only TCP listener's server, when there is one: `/metrics` counts its
    /// connections and refusals apart from the socket's.
    public let listener = ListenerSlot()

    public init(
        configuration: @escaping @Sendable () -> Config, version: String, started: Timestamp, engine: LiveEngine,
        store: StateStore?, publisher: EventPublisher, runtime: @escaping @Sendable () -> RuntimeStatus,
        errors: RecentErrors, clock: @escaping @Sendable () -> Timestamp,
        ingest: @escaping @Sendable ([Sighting]) -> Bool, logger: Logger = .silent
    ) {
        self.configuration = configuration
        self.version = version
        self.started = started
        self.engine = engine
        self.store = store
        self.publisher = publisher
        self.runtime = runtime
        self.errors = errors
        self.clock = clock
        self.ingest = ingest
        self.logger = logger
    }
}

/// Where the read-only TCP listener's server is put once it is made (after the context).
public final class ListenerSlot: Sendable {
    private let server = Mutex<HTTPServer?>(nil)
    public init() {}
    public func withLock<T>(_ body: (inout HTTPServer?) -> T) -> T { server.withLock { body(&$0) } }
}

/// When each remote receiver was last warned about, per kind of warning (its clock ahead,
/// its records too old): a relay that is off is worth a warning every ten minutes while it
/// lasts, not one per request.
public final class RelayWarnings: Sendable {
    private let lastWarned = Mutex<[String: Timestamp]>([:])
    static let interval = TimeSpan.seconds(600)
    /// A relay that makes up receiver names cannot grow the table without bound: past this,
    /// names not warned about for ten minutes are forgotten, and while all are recent no new
    /// name is warned about (a thousand warnings in ten minutes have said it).
    static let kept = 1000

    public init() {}

    /// True when `key` has not been warned about in the last ten minutes (and now has).
    public func due(_ key: String, at now: Timestamp) -> Bool {
        lastWarned.withLock { warned in
            if let last = warned[key], now - last < Self.interval { return false }
            if warned.count >= Self.kept { warned = warned.filter { now - $0.value < Self.interval } }
            guard warned.count < Self.kept else { return false }
            warned[key] = now
            return true
        }
    }
}
