import API
import APIModel
import BeaconConfig
import BeaconCore
import BeaconRuntime
import Dispatch
import Logging
import MQTT
import POSIX
import Publishing
import Storage
import Synchronization

/// This gateway's place in its site (SPEC §6): what its own adapters hear goes to the broker
/// in batches of at most `window`, and what the other gateways hear comes back into this
/// gateway's engine, so every gateway keeps the whole store's state.
///
/// Its status is `online` (retained) on `gateways/<id>/status` while connected, `offline`
/// when it stops cleanly, and `offline` by the broker's last will when it dies.
/// `@unchecked Sendable`: the intake (each peer's sequence) is the MQTT client's thread's, the
/// batch sequence the publisher thread's; what is shared is behind locks.
final class SiteLink: DaemonService, @unchecked Sendable {
    let name = "site"
    /// It hands other gateways' sightings to the engine and publishes on the connection.
    let startsAfter = ["engine", "site-connection"]
    let site: SiteSettings
    let gateway: String
    let client: MQTTClient
    let engine: LiveEngine
    let logger: Logger
    let clock: @Sendable () -> Timestamp
    /// Touched only on the MQTT client's thread; `peerSnapshot` is what other threads read.
    private var intake: SiteIntake
    private let peerSnapshot = Mutex<[String: SiteIntake.Peer]>([:])
    /// ESPresense's and OpenMQTTGateway's messages (`SiteLink+Foreign`): like `intake`, the
    /// MQTT client's thread's alone.
    var foreign: ForeignIntake
    /// When each system's topic last carried a message, and the connection whose silence on
    /// them was told (`SiteLink+Foreign`).
    let foreignLastMessage = Mutex<[ForeignIntake.System: Timestamp]>([:])
    let foreignSilenceTold = Mutex<Timestamp?>(nil)
    private let pending = Mutex<[Sighting]>([])
    /// Who is online, what each says of itself, and the locator election (`SiteLink+Locator`).
    let roles: Mutex<SiteRoles>
    let stopRequested = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let threads = ServiceThreads()
    let warnings = RelayWarnings()
    let counters = Mutex(Counters())
    let topics: SiteTopics
    /// The gateways the site file names (receivers' `gateway`, and this one); empty when it
    /// names none. Only they take part: their status, info, marks and decisions are heard.
    let knownGateways: Set<String>
    /// The state file: this gateway's copies of the locator's alerts take its ids there.
    let store: StateStore
    /// The locator's decisions and this gateway's alerts, paired (`SiteLink+HandOver`).
    let matcher = Mutex(HandOverMatcher())
    /// The last zone alert decided for each place, by any locator: what a new locator checks
    /// its own alerts against (`DecidedZones`, `SiteLink+HandOver`).
    let decidedZones = Mutex(DecidedZones())

    /// Sightings wait at most this long before they are published.
    static let window = TimeSpan.milliseconds(250)
    /// A batch goes out at least this often, with no sightings if none were heard.
    static let heartbeat = TimeSpan.seconds(1)
    /// At most this many of this gateway's sightings wait for the broker; past it, the oldest
    /// are dropped (late sightings are worth nothing to the site).
    static let pendingLimit = 20_000

    struct Counters {
        var batchesSent = 0
        /// This gateway's sightings not sent: the broker was away, or too many waited.
        var sightingsUnsent = 0
        var batchesReceived = 0
        var batchesLost = 0
        var sightingsReceived = 0
        /// Messages refused whole, and records dropped, by reason.
        var dropped: [String: Int] = [:]
        var lastStateLook: Timestamp?
    }

    /// Whether this gateway's webhooks deliver, and how far the locator delivered.
    let gate: SiteDeliveryGate

    /// What the broker holds of the site's state, as the locator publishes it (`SiteLink+State`).
    let retained = Mutex(RetainedTopics())
    /// Home Assistant discovery, when configured.
    let discovery: HomeAssistantDiscovery?
    /// Each asset's name, for its Home Assistant device.
    let assetNames: [String: String]
    /// The receivers' configured calibrations and `calibration.tag_offset_db`, for the
    /// retained `calibration` fit (as loaded at start, like the rest of `site:`).
    let calibrationBasis: ([String: ReceiverCalibration], Double)
    /// Told at each connect (the site's events' worker retries at once).
    private let onConnect: @Sendable () -> Void

    /// The connection to the site's broker, with this gateway's will (`offline`, retained).
    /// Its client id ends in a random part drawn at each start: a broker disconnects a client
    /// when another connects with the same id, so a fixed id would let any broker user, even a
    /// read-only one, knock the gateway off again and again (each time with its will). The
    /// sessions are clean, so nothing is lost by a new id. (The shipped broker configuration
    /// also takes the username as the client id: docs/sites.md.)
    static func clientID(site: String, gateway: String) -> String {
        "beacond-\(site)-\(gateway)-" + String(UInt32.random(in: .min ... .max), radix: 16)
    }

    static func makeClient(
        site: SiteSettings, gateway: String, password: String?, logger: Logger
    ) throws(MQTTClient.Unavailable) -> MQTTClient {
        try MQTTClient(
            settings: MQTTClient.Settings(
                host: site.mqtt.host, port: site.mqtt.port, tls: site.mqtt.tls, caFile: site.mqtt.caFile,
                username: site.mqtt.username, password: password, clientID: clientID(site: site.id, gateway: gateway),
                keepaliveSeconds: Int(site.mqtt.keepalive.seconds),
                will: .init(topic: SiteTopics(site: site.id).status(gateway), text: "offline", qos: 1, retain: true)
            ),
            logger: logger)
    }

    init(
        site: SiteSettings, config: Config, client: MQTTClient, engine: LiveEngine, gate: SiteDeliveryGate,
        store: StateStore, version: String, logger: Logger, clock: @escaping @Sendable () -> Timestamp,
        onConnect: @escaping @Sendable () -> Void = {}
    ) {
        self.site = site
        gateway = config.gateway.id
        self.client = client
        self.engine = engine
        self.gate = gate
        self.store = store
        topics = SiteTopics(site: site.id)
        self.logger = logger
        self.clock = clock
        let named = Set(config.receivers.compactMap(\.gateway)).union(site.gateways)
        knownGateways = named.isEmpty ? [] : named.union([config.gateway.id])
        intake = SiteIntake(
            gateway: config.gateway.id, knownGateways: named.isEmpty ? [] : named.union([config.gateway.id]),
            knownReceivers: Set(config.receivers.map(\.id)))
        foreign = ForeignIntake(settings: site.foreign)
        roles = Mutex(
            SiteRoles(
                election: LocatorElection(
                    me: site.locator ? .init(id: config.gateway.id, priority: site.locatorPriority) : nil)))
        discovery = site.homeAssistantPrefix.map {
            HomeAssistantDiscovery(
                prefix: $0, site: site.id, gateways: named.union([config.gateway.id]).sorted(), version: version)
        }
        assetNames = Dictionary(config.assets.compactMap { a in a.name.map { (a.id, $0) } }) { a, _ in a }
        calibrationBasis = (config.engineConfiguration.receivers, config.calibration.tagOffset)
        self.onConnect = onConnect
    }

    /// What the broker connection tells the link (`SiteConnection` starts the client with it):
    /// each connect subscribes, says who this gateway is and sends the retained state again;
    /// each message is dispatched by its topic. `onPublished` is the outbox's and the delivery
    /// gate's.
    func clientHooks(onPublished: @escaping @Sendable (Int32, String?) -> Void) -> MQTTClient.Hooks {
        MQTTClient.Hooks(
            onConnect: { [weak self, topics, discovery, onConnect, foreignFilters = site.foreign.filters] client in
                self?.sayWhoIAm()
                // Sightings lose nothing by QoS 0 (the next batch follows); this gateway's own
                // batches, decisions and retained state are not sent back to it (No Local). The
                // retained state of earlier runs is read to clear what is no longer configured.
                for filter in SiteTopic.Filter.allCases {
                    let noLocal = [.sightings, .decided, .assets, .regions, .zones].contains(filter)
                    client.subscribe(topics.filter(filter), qos: filter == .sightings ? 0 : 1, noLocal: noLocal)
                }
                for filter in foreignFilters { client.subscribe(filter, qos: 0) }
                if let discovery {
                    client.subscribe(discovery.prefix + "/device_tracker/+/config", qos: 1, noLocal: true)
                    client.subscribe(discovery.prefix + "/sensor/+/config", qos: 1, noLocal: true)
                    client.subscribe(discovery.prefix + "/status", qos: 1)
                }
                // A new session: the broker may have lost what it held (a broker restarted
                // without persistence), so the locator says it all again.
                self?.retained.withLock { $0.resend() }
                onConnect()
            },
            onMessage: { [weak self] topic, payload, isRetained in
                self?.received(topic: topic, payload: payload, retained: isRetained)
            },
            onPublished: onPublished)
    }

    /// This gateway's status and info, retained: at each connect, and again whenever another
    /// client says otherwise in its name (`SiteLink+Locator`).
    func sayWhoIAm() {
        client.publish(.init(topic: topics.status(gateway), text: "online", qos: 1, retain: true))
        client.publish(.init(topic: topics.info(gateway), text: info.text, qos: 1, retain: true))
    }

    var info: GatewayInfo { GatewayInfo(locator: site.locator, priority: site.locatorPriority) }

    var peers: [String: SiteIntake.Peer] { peerSnapshot.withLock { $0 } }
    var online: [String: Bool] { roles.withLock { $0.online } }
    var queued: Int { pending.withLock { $0.count } }

    /// For `/v1/status` and `/metrics`.
    var status: StatusReport.Site {
        var report = StatusReport.Site()
        let state = client.state
        report.id = site.id
        report.broker = site.mqtt.url
        report.connected = state.connected
        report.reconnects = state.reconnects
        report.lastError = state.lastError
        report.publishRefused = state.refused.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        report.silentTopics = silentForeignFilters(at: clock())
        report.queued = queued
        let c = counters.withLock { $0 }
        (report.batchesSent, report.sightingsUnsent) = (c.batchesSent, c.sightingsUnsent)
        (report.batchesReceived, report.batchesLost, report.sightingsReceived) = (
            c.batchesReceived, c.batchesLost, c.sightingsReceived
        )
        report.dropped = c.dropped.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let election = roles.withLock { $0.election }
        if let announced = election.announced {
            report.locator = StatusReport.Site.Locator(
                gateway: announced.gateway, epoch: Int(announced.epoch), since: RFC3339.format(announced.since),
                thisGateway: election.isLocator && state.connected)
        }
        let peers = self.peers
        let online = self.online
        report.gateways = Set(peers.keys).union(online.keys).sorted().map { id in
            var g = StatusReport.Site.Gateway()
            g.id = id
            g.online = online[id]
            if let p = peers[id] {
                g.lastBatch = p.lastBatch.map(RFC3339.format)
                (g.batches, g.lost) = (p.batches, p.lost)
                g.clockOffsetSeconds = p.clockOffset?.seconds
            }
            return g
        }
        report.foreignReceivers = foreignReceivers
        return report
    }

    /// The connection itself is `SiteConnection`'s, started before this and stopped after the
    /// workers that publish on it.
    func start() throws {
        threads.spawn(named: "beacond-site") { [self] in publishLoop() }
        logger.info(
            "site.started",
            metadata: [
                "site": "\(site.id)", "broker": "\(site.mqtt.url)", "gateway": "\(gateway)",
                "locator": "\(site.locator ? "eligible, priority \(site.locatorPriority)" : "no (relay only)")",
            ])
    }

    func stop() {
        stopRequested.store(true, ordering: .relaxed)
        wake.signal()
        threads.join()
        logger.info("site.stopped", metadata: ["batches_sent": "\(counters.withLock { $0.batchesSent })"])
    }

    /// This gateway's own sightings (under the site's receiver ids), to be published.
    func enqueue(_ batch: [Sighting]) {
        let dropped = pending.withLock { waiting -> Int in
            waiting += batch
            let over = waiting.count - Self.pendingLimit
            if over > 0 { waiting.removeFirst(over) }
            return max(over, 0)
        }
        if dropped > 0 { counters.withLock { $0.sightingsUnsent += dropped } }
    }

    /// Every `window`: this gateway's sightings out, or a batch with none when a second has
    /// passed without one (the others hear it is alive: `SiteRoles.silence`), and the roles
    /// checked for gateways gone silent.
    private func publishLoop() {
        var seq: Int64 = 0
        var lastSent = clock()
        while !stopRequested.load(ordering: .relaxed) {
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(Self.window.nanoseconds)))
            checkSilence(at: clock())
            tellForeignSilence(at: clock())
            publishDeliveries()
            publishState(at: clock())
            let batch = pending.withLock { waiting -> [Sighting] in
                defer { waiting.removeAll(keepingCapacity: true) }
                return waiting
            }
            guard !batch.isEmpty || clock() - lastSent >= Self.heartbeat else { continue }
            lastSent = clock()
            guard client.state.connected else {
                counters.withLock { $0.sightingsUnsent += batch.count }
                continue
            }
            seq += 1
            let payload = SightingBatch.encode(.init(gateway: gateway, seq: seq, sent: clock()), batch)
            let sent = client.publish(.init(topic: topics.sightings(gateway), payload: payload, qos: 0, retain: false))
            counters.withLock {
                if sent != nil { $0.batchesSent += 1 } else { $0.sightingsUnsent += batch.count }
            }
        }
    }

    private func received(topic: String, payload: UnsafeRawBufferPointer, retained isRetained: Bool) {
        guard topics.contains(topic) else {
            if foreignMessage(topic: topic, payload: payload) { return }
            return homeAssistantMessage(topic: topic, payload: payload, retained: isRetained)
        }
        guard let parsed = topics.parse(topic) else { return }
        switch parsed {
        case .asset, .regionState, .zone:
            let text = String(decoding: payload, as: UTF8.self)
            retained.withLock { _ = $0.contradicted(topic, text) }
            if isRetained, !payload.isEmpty { retained.withLock { $0.found(topic) } }
        case let .decided(sender): decidedMessage(from: sender, payload)
        case let .delivered(sender, webhook): deliveredMessage(from: sender, webhook: webhook, payload)
        case .locator, .status, .info:
            roleMessage(parsed, String(decoding: payload, as: UTF8.self), retained: isRetained)
        case let .sightings(sender): sightingsMessage(from: sender, payload)
        case .calibration, .events: break
        }
    }

    /// `sightings/<sender>`: a batch for the engine (the client's thread).
    private func sightingsMessage(from sender: String, _ payload: UnsafeRawBufferPointer) {
        let now = clock()
        guard let outcome = intake.take(sender: sender, payload: payload, at: now) else { return }
        peerSnapshot.withLock { [peers = intake.peers] in $0 = peers }
        if outcome.rejected == nil, outcome.batch { heard(sender, at: now) }
        if !outcome.sightings.isEmpty { engine.submit(.sightings(outcome.sightings)) }
        counters.withLock { c in
            if outcome.rejected == nil { c.batchesReceived += 1 }
            c.batchesLost += outcome.lost
            c.sightingsReceived += outcome.sightings.count
            for (reason, n) in outcome.dropped { c.dropped[reason, default: 0] += n }
        }
        if let problem = outcome.problem, warnings.due("\(sender) \(outcome.dropped.keys.sorted())", at: now) {
            logger.warning(
                "site.batch_problem",
                metadata: [
                    "sender": "\(sender)",
                    "dropped": "\(outcome.dropped.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: ","))",
                    "error": "\(problem)",
                    "next":
                        "the rest of what it sends is still taken; this is logged again in ten minutes if it goes on",
                ])
        }
        if let offset = intake.peers[sender]?.clockOffset, abs(offset.seconds) > SiteIntake.clockWarning.seconds,
            warnings.due("\(sender) clock", at: now)
        {
            logger.warning(
                "site.clock_offset",
                metadata: [
                    "gateway": "\(sender)", "offset_s": "\(Int(offset.seconds.rounded()))",
                    "next": "its sightings are taken at the wrong time; set both gateways' clocks (NTP)",
                ])
        }
    }
}
