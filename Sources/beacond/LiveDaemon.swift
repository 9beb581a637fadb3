import API
import ArgumentParser
import BeaconConfig
import BeaconCore
import BeaconRuntime
import BlueZ
import Crypto
import Dispatch
import Glibc
import HTTPServer
import Logging
import MQTT
import POSIX
import Publishing
import Storage
import Synchronization
import Systemd

/// `beacond --config PATH`: wires BlueZ, the engine and the outputs (state store, webhooks,
/// the Unix-socket API and its event stream), and runs until SIGTERM or SIGINT.
///
/// Its services start in the order `run` lists them and stop in reverse (the input hands
/// over its last batch, the engine takes a final turn and saves its states, the webhooks
/// make a last attempt, the API closes last); ARCHITECTURE.md lists them and the threads.
struct LiveDaemon {
    let config: Config
    /// `ConfigDigest` of the text `config` was loaded from.
    let configDigest: String
    /// Where the configuration came from (SIGHUP reads it again).
    let configPath: String
    /// The same, absolute, for `/v1/status` (beaconctl doctor checks that file).
    let configFile: String
    /// Also print events on standard output as JSON Lines.
    let printEvents: Bool
    /// Run on the site simulator (`--simulate`, with this seed) instead of BlueZ.
    let simulationSeed: UInt64?
    let errors: RecentErrors
    let journal: JournalLog
    /// `--log-level` was given: it wins over `gateway.log_level`, at start and on a reload.
    let logLevelFromCommandLine: Bool
    /// What the file sets up that can never happen: logged at start (`config.warning`).
    let configWarnings: [ConfigError]
    let notifier = ServiceNotifier()
    /// On a gateway of a site: whether its webhooks deliver (it is the locator) or stand by.
    let deliveryGate: SiteDeliveryGate?
    /// Deliveries acknowledged while the disk would not save it, for the next run's workers.
    let unsavedAcks: UnsavedAcks

    init(
        config: Config, digest: String, path: String, printEvents: Bool, simulationSeed: UInt64?,
        logLevel: JournalLog.Level, logLevelFromCommandLine: Bool = false, configWarnings: [ConfigError] = []
    ) {
        self.config = config
        configDigest = digest
        configPath = path
        configFile = Self.absolute(path)
        self.printEvents = printEvents
        self.simulationSeed = simulationSeed
        let errors = RecentErrors()
        self.errors = errors
        journal = JournalLog(threshold: logLevel, problems: errors.record)
        self.logLevelFromCommandLine = logLevelFromCommandLine
        self.configWarnings = configWarnings
        deliveryGate = config.site == nil ? nil : SiteDeliveryGate(gateway: config.gateway.id, now: WallClock.now())
        unsavedAcks = UnsavedAcks(directory: UnsavedKeep.directory(apiSocket: config.api.socket))
    }

    /// A valid file's warnings, one line each (`config.warning`), at start and on a reload.
    static func logWarnings(_ warnings: [ConfigError], to logger: Logger) {
        for warning in warnings {
            logger.warning(
                "config.warning",
                metadata: [
                    "at": "\(warning.file):\(warning.line):\(warning.column)", "key": "\(warning.path)",
                    "problem": "\(warning.message)",
                ])
        }
    }

    /// The path made absolute, so that `/v1/status` names it wherever beaconctl runs.
    static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        return String(cString: cwd) + "/" + path
    }

    /// Builds the daemon's parts, starts its services in order, waits for SIGTERM (or an input
    /// that ends), and stops them in reverse.
    func run() throws {
        // Before any thread starts, so that none but the waiter takes them (SignalWaiter).
        let signals = SignalWaiter([SIGTERM, SIGINT, SIGHUP])
        let started = WallClock.now()
        Self.logWarnings(configWarnings, to: logger)
        try lockStateDirectory()
        let late = LateOpening()
        let store = openStore(late: late)
        let keep = UnsavedKeep(
            directory: UnsavedKeep.directory(apiSocket: config.api.socket), reserve: openReserve(store), logger: logger)
        var core = restoredEngine(store: store, keep: keep, start: started)
        startZoneAnalytics(store: store, engine: &core.engine, at: started)
        let siteClient = try makeSiteClient()
        let siteEvents = siteClient.map { MQTTBatchTransport(client: $0, topics: SiteTopics(site: config.site!.id)) }
        let published: @Sendable (Int32, String?) -> Void = { [deliveryGate] mid, refused in
            siteEvents?.published(mid, refused: refused)
            deliveryGate?.answered(mid)
        }
        let publisher = makePublisher(store: store, keep: keep, unsaved: core.unsaved, siteEvents: siteEvents)
        // A turn's events and the states they moved to are written in one transaction.
        let engine = LiveEngine(
            engine: core.engine, clock: WallClock.now, savingState: true, hooks: EngineLoop.hooks(logger: logger)
        ) { events, state, transitions in
            publisher.publish(events, states: state, transitions: transitions)
        }
        let adapters = AdapterStates()
        let running = RunningConfig(config, digest: configDigest, at: started)
        late.handle { applyLateStore(store, engine: engine, running: running) }

        let services = ServiceGroup(logger: logger)
        let site = makeSiteLink(engine: engine, client: siteClient, publisher: publisher, store: store)
        if let site { publisher.addListener { events, enqueuedAt in site.stored(events, enqueuedAt: enqueuedAt) } }
        // What this gateway's own radios hear: to its engine, and to its site.
        let own: @Sendable ([Sighting]) -> Void = { batch in
            engine.submit(.sightings(batch))
            site?.enqueue(batch)
        }
        let input: any DaemonService & Sendable
        let inputStatus: @Sendable (inout RuntimeStatus) -> Void
        if let simulationSeed {
            input = SimulatedInput(
                config: config, seed: simulationSeed, logger: logger, deliver: own,
                publishForeign: { batch in site?.publishForeign(batch) })
            inputStatus = { $0.simulated = true }
        } else {
            let receivers = LocalReceivers(config: config)
            let scanner = BlueZScanner(
                settings: Self.scannerSettings(config), clock: WallClock.now,
                receiverName: { receivers.receiver(adapter: $0) },
                output: RadioInput.output(engine: engine, sightings: own, adapters: adapters, logger: logger),
                logger: logger)
            input = RadioInput(scanner: scanner, logger: logger) { services.serviceEnded("bluez") }
            inputStatus = { status in
                status.bluezReachable = scanner.bluezReachable.load(ordering: .relaxed)
                status.dbusSignals = scanner.signalsReceived.load(ordering: .relaxed)
                status.dbusReconnects = scanner.reconnects.load(ordering: .relaxed)
                status.advertising = scanner.advertisingReceivers.withLock { $0 }
            }
        }
        let esphome = ESPHomeProxies(
            proxies: simulationSeed == nil ? config.ownESPHomeProxies : [], clock: WallClock.now, logger: logger,
            deliver: own)
        let systemd = SystemdNotices(
            notifier: notifier, engine: engine, store: store, adapters: adapters,
            simulated: simulationSeed.map { _ in "simulating \(config.assets.count) tags" })
        let hub = EventStreamHub(store: store)
        publisher.addListener { events, _ in hub.publish(events) }
        let context = APIContext(
            configuration: { running.current }, version: BeaconVersion.string, started: started, engine: engine,
            store: store, publisher: publisher,
            runtime: {
                var status = RuntimeStatus()
                status.configFile = configFile
                (status.configDigest, status.configLoadedAt, status.configNeedsRestart) = running.loaded
                status.adapters = adapters.all
                inputStatus(&status)
                status.site = site?.status
                status.esphome = esphome.status
                (status.reloadsApplied, status.reloadsRefused) = running.reloadCounts
                status.stateReserve = keep.reserveStatus
                return status
            }, errors: errors, clock: WallClock.now, ingest: { engine.submit(.sightings($0)) }, logger: logger)

        // SIGTERM and SIGHUP are handled before the socket listens: a client (a supervisor, a
        // test) that has seen the socket answer may stop or reload us at once, and must get an
        // orderly stop, or a reload once every service runs (SIGHUP's default would kill us).
        let allStarted = DispatchSemaphore(value: 0)
        let reloads = Reloads {
            allStarted.wait()
            allStarted.signal()
            reload(running: running, services: services)
        }
        signals.start(named: "beacond-signals") { [logger] number in
            if number == SIGHUP { return reloads.request() }
            logger.info("beacond.stopping", metadata: ["signal": "\(number)"])
            services.requestStop()
        }
        // In start order; stopped in reverse: the input hands over its last batch, the engine
        // takes a final turn and saves states, held events get a last try, webhooks a last
        // attempt, and the API closes last.
        let api = APIService(
            router: APIRouter(context: context, stream: hub), socket: config.api.socket, logger: logger)
        try services.start(
            [api] + (try readOnlyListener(context: context, store: store, publisher: publisher, socket: api.server))
                + (site.map {
                    [
                        SiteConnection(
                            client: $0.client, topics: $0.topics, gateway: $0.gateway,
                            hooks: $0.clientHooks(onPublished: published))
                    ]
                } ?? [])
                + [
                    WebhookDelivery(
                        publisher: publisher, store: store, fixed: siteOutboxes, logger: logger,
                        settings: webhookSettings,
                        makeWorker: { makeWebhookWorker($0, store: store) }),
                    HeldEventsFlush(publisher: publisher, keep: keep, logger: logger),
                    EngineLoop(
                        engine: engine, maxIdleWait: systemd.maxIdleWait,
                        onTurn: engineTurned(systemd: systemd, publisher: publisher)),
                    ZoneAnalytics(
                        store: store, engine: engine, publisher: publisher, analytics: config.analytics,
                        clock: WallClock.now, logger: logger),
                ] + (site.map { [$0] } ?? []) + [
                    input,
                    esphome,
                    StateVerifier(store: store, logger: logger),
                    systemd,
                ])
        // Told before a reload that waited for the start may go on: its `config.reloaded`
        // comes after this line, as the start came before it.
        logger.info(
            "beacond.started",
            metadata: [
                "gateway": "\(config.gateway.id)", "version": "\(BeaconVersion.string)",
                "services": "\(services.names.joined(separator: ","))",
                "engine_threads": "\(config.engine.threads(available: availableCores()))",
            ])
        warnIfPhonesCannotBeResolved()
        allStarted.signal()
        services.waitForStopRequest()
        reloads.cancel()
        services.stop()
        logSummary(engine: engine, input: input)
        logger.info("beacond.stopped")
    }

    /// Phones are followed by their keys with libcrypto's AES (SPEC §9): without it they are
    /// never placed, which must not be silent.
    func warnIfPhonesCannotBeResolved() {
        let phones = config.assets.filter { if case .irk = $0.beacon { true } else { false } }
        guard !phones.isEmpty, let reason = AES128.unavailableReason else { return }
        logger.error(
            "phones.unavailable",
            metadata: [
                "assets": "\(phones.map(\.id).joined(separator: ","))", "error": "\(reason)",
                "next":
                    "install libssl3 (the package depends on it) and restart; until then these assets are never placed",
            ])
    }

    /// The read-only TCP listener when `http:` asks for one: its own router and event stream
    /// hub over the same context, behind the token gate.
    func readOnlyListener(context: APIContext, store: StateStore, publisher: EventPublisher, socket: HTTPServer)
        throws -> [APIService]
    {
        guard let http = config.http else { return [] }
        var token: String?
        if let file = http.tokenFile {
            do {
                token = try readSecretFile(file)
            } catch {
                logger.error("http.token_unreadable", metadata: ["file": "\(file)", "error": "\(error)"])
                throw ExitCode(ExitStatus.config)
            }
        }
        let hub = EventStreamHub(store: store)
        publisher.addListener { events, _ in hub.publish(events) }
        let router = APIRouter(context: context, stream: hub)
        let service = APIService(
            listening: http, router: router, gate: ReadOnlyGate(token: token, hosts: [http.host]), logger: logger)
        router.reportConnections(of: socket)
        context.listener.withLock { $0 = service.server }
        return [service]
    }

    /// The journal (with fields) under systemd, standard error otherwise; warnings and errors
    /// are kept for `/v1/status` (`JournalLog`'s problems).
    var logger: Logger { journal.logger }
}

/// Time since boot, suspend included (`CLOCK_BOOTTIME`): setting the wall clock does not move it.
enum BootClock {
    @Sendable static func elapsed() -> TimeSpan { TimeSpan(nanoseconds: SystemClock.boot) }
}

/// `CLOCK_REALTIME` as a `Timestamp`: the production clock. Event times are wall-clock
/// times; a step of this clock is told from time passing by `BootClock` and shifted out of
/// the engine (`LiveEngine.elapsed`), so it fires no timer.
enum WallClock {
    @Sendable static func now() -> Timestamp { Timestamp(nanoseconds: SystemClock.realtime) }
}
