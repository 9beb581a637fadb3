import API
import ArgumentParser
import BeaconConfig
import BeaconCore
import BeaconRuntime
import BlueZ
import Dispatch
import Glibc
import HTTPServer
import POSIX
import Publishing
import Storage
import Synchronization
import Systemd

/// `beacond --config PATH`: wires BlueZ, the engine and the outputs (state store, webhooks,
/// the Unix-socket API and its event stream), and runs until SIGTERM or SIGINT.
///
/// Threads: the scanner reads D-Bus, the engine takes batches and fires timers, the API
/// server answers on its socket, and each webhook delivers on its own. Shutdown runs in
/// order: the scanner hands over its last batch, the engine takes a final turn and saves
/// region states, then webhooks make a last delivery attempt and the API closes.
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
    let errors = RecentErrors()
    let journal: JournalLog
    /// `--log-level` was given: it wins over `gateway.log_level`, at start and on a reload.
    let logLevelFromCommandLine: Bool
    let notifier = ServiceNotifier()

    init(
        config: Config, digest: String, path: String, printEvents: Bool, simulationSeed: UInt64?,
        logLevel: JournalLog.Level, logLevelFromCommandLine: Bool = false
    ) {
        self.config = config
        configDigest = digest
        configPath = path
        configFile = Self.absolute(path)
        self.printEvents = printEvents
        self.simulationSeed = simulationSeed
        journal = JournalLog(threshold: logLevel)
        self.logLevelFromCommandLine = logLevelFromCommandLine
    }

    /// The path made absolute, so that `/v1/status` names it wherever beaconctl runs.
    static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        return String(cString: cwd) + "/" + path
    }

    func run() throws {
        let started = WallClock.now()
        let late = LateOpening()
        try lockStateDirectory()
        let store = openStore(late: late)
        var core = BeaconEngine(configuration: config.engineConfiguration, start: started)
        // States an earlier run could not save (a full disk) are newer than the store's: each
        // region's replaces the store's, and the assets' replace the store's whole.
        let keep = UnsavedKeep(
            directory: UnsavedKeep.directory(apiSocket: config.api.socket), reserve: openReserve(store), log: log)
        let unsaved = keep.takeOver()
        if store.openFailure == nil { restoreRegions(from: store, into: &core, assetsKept: unsaved?.state != nil) }
        if let unsaved, let kept = unsaved.state {
            for region in kept.regions { _ = core.restore(region) }
            for asset in kept.assets { _ = core.restore(asset) }
            let restored = core.savedState()
            if (try? store.saveRegions(restored.regions)) != nil, (try? store.saveAssets(restored.assets)) != nil {
                keep.statesSaved()
            }
        }
        if store.openFailure == nil { retireRemovedWebhooks(store: store, specs: config.webhooks) }
        let workers = makeWebhookWorkers(store: store)
        let publisher = EventPublisher(
            gateway: config.gateway.id, store: store, workers: workers, echo: printEvents, clock: WallClock.now,
            log: log)
        // What the state store cannot take is copied to the runtime directory until it can.
        publisher.onHold = { keep.held($0, dropped: $1) }
        publisher.onHeldStored = { keep.eventsStored() }
        if let unsaved {
            publisher.adoptHeld(unsaved.events)
            publisher.retryHeld(now: true)
        }
        let persistFailures = Mutex(FailureEpisode())
        // Retried every turn that changes a state and every 5 s: logged when it starts failing
        // and when it works again, not each time.
        publisher.onStates = { state, error in
            guard let error else {
                keep.statesSaved()
                if let took = persistFailures.withLock({ $0.succeeded(at: WallClock.now()) }) {
                    log("info: state.saved_again after_s=\(Int(took.seconds.rounded()))")
                }
                return
            }
            keep.statesUnsaved(state)
            if persistFailures.withLock({ $0.failed(at: WallClock.now()) }) {
                log(
                    "error: state.write_failed error=\(error) next=region and zone states are saved when "
                        + "the state store can write again; a restart before that restores older ones")
            }
        }
        // A turn's events and the states they moved to are written in one transaction.
        let engine = LiveEngine(engine: core, clock: WallClock.now, savingState: true) { events, state in
            publisher.publish(events, states: state)
        }
        let adapters = AdapterStates()
        let scanner = BlueZScanner(
            settings: Self.scannerSettings(config.bluetooth),
            clock: WallClock.now,
            output: { output in
                switch output {
                case let .sightings(batch): engine.submit(.sightings(batch))
                case let .adapter(status, t):
                    let blind = adapters.update(status)
                    engine.submit(.external(Event(time: t, payload: status.event)))
                    if let blind {
                        engine.submit(
                            .call { engine, _ in
                                engine.setBlind(blind)
                                return []
                            })
                        log(
                            blind
                                ? "warning: radios.blind next=no region exits and no asset lost until an adapter hears again"
                                : "info: radios.hearing next=beacons and assets get exit_timeout to be heard before they exit"
                        )
                    }
                }
            },
            log: { record in log("\(record.level.rawValue): \(record.text)") })

        let hub = EventStreamHub(store: store)
        publisher.addListener(hub.publish)
        let running = RunningConfig(config, digest: configDigest, at: started)
        late.handle { applyLateStore(store, engine: engine, running: running) }
        let context = APIContext(
            configuration: { running.current }, version: BeaconVersion.string, started: started, engine: engine,
            store: store, publisher: publisher,
            runtime: {
                var status = RuntimeStatus()
                status.configFile = configFile
                (status.configDigest, status.configLoadedAt, status.configNeedsRestart) = running.loaded
                status.simulated = simulationSeed != nil
                status.adapters = adapters.all.map {
                    RuntimeStatus.Adapter(
                        name: $0.adapter, present: $0.present, powered: $0.powered, discovering: $0.discovering)
                }
                status.bluezReachable = scanner.bluezReachable.load(ordering: .relaxed)
                status.dbusSignals = scanner.signalsReceived.load(ordering: .relaxed)
                status.dbusReconnects = scanner.reconnects.load(ordering: .relaxed)
                status.stateReserve = keep.reserveStatus
                return status
            }, errors: errors, clock: WallClock.now, ingest: { engine.submit(.sightings($0)) }, log: log)
        let router = APIRouter(context: context, stream: hub)
        let server = HTTPServer(settings: HTTPServer.Settings(socketPath: config.api.socket), handler: router.handle)
        router.attach(server)
        // SIGTERM is handled before the socket listens: a client (a supervisor, a test) that
        // has seen the socket answer may stop us at once, and must get an orderly stop.
        let simulated = simulationSeed.map { SimulatedInput(config: config, seed: $0, engine: engine) }
        let signals = handleStopSignals {
            notifier.stopping()
            scanner.stop()
            simulated?.stop()
        }
        do {
            try server.start()
        } catch {
            log("error: api.unavailable socket=\(config.api.socket) error=\(error)")
            throw ExitCode(ExitStatus.unavailable)
        }
        log("info: api.listening socket=\(config.api.socket)")

        // Set before the engine's thread starts.
        let watchdog = watchdogAndStatus(engine: engine, store: store, adapters: adapters)
        let shedding = RunningTotalLog()
        let evictions = RunningTotalLog()
        engine.onTurn = { t in
            watchdog(t)
            publisher.retryHeld()
            // Sightings the engine had no room for: told at once, then once a minute.
            if let report = shedding.report(total: engine.shedCount, at: t) {
                log(
                    "warning: engine.behind sightings_dropped=\(report.count) "
                        + (report.since.map { "over_s=\(Int((t - $0).seconds.rounded()))" }
                            ?? "next=the engine cannot keep up with what the radios hear; fewer assets, "
                            + "a longer positioning.publish_interval or a faster gateway"))
            }
            // Beacons forgotten early because the table was full: a flood of made-up ones.
            if let report = evictions.report(total: engine.glance.counters.beaconsEvicted, at: t) {
                log(
                    "warning: beacons.evicted count=\(report.count) limit=\(BeaconEngine.defaultBeaconLimit) "
                        + (report.since.map { "over_s=\(Int((t - $0).seconds.rounded()))" }
                            ?? "next=the stalest were forgotten; so many distinct beacons are likely spoofed "
                            + "(over the air or by a relay)"))
            }
        }
        engine.elapsed = BootClock.elapsed
        engine.onClockStep = { step in
            log(
                "warning: clock.step by_s=\(Int(step.seconds.rounded())) "
                    + "next=not taken as time passing: region, dwell and asset timers moved with the clock")
        }
        if let interval = notifier.watchdogInterval {
            engine.maxIdleWait = .milliseconds(max(10, min(1000, Int64(interval * 500))))
        }
        let inputs = DispatchGroup()
        // The engine and the scanner stop first, in order, so nothing heard is dropped.
        start(in: inputs) { engine.run() }
        start(in: inputs) {
            if let simulated {
                simulated.run()
                log("info: simulation.stopped sightings=\(simulated.sightings.load(ordering: .relaxed))")
            } else {
                scanner.run()
            }
            engine.stop()
        }
        let outputs = DispatchGroup()
        start(in: outputs) { server.run() }
        for worker in workers { start(in: outputs) { worker.run() } }
        let reloads = handleReload {
            reload(
                running: running, engine: engine, scanner: scanner, publisher: publisher, store: store, outputs: outputs
            )
        }

        // Ready: the socket listens (above) and BlueZ has been tried once, found or not.
        let deadline = WallClock.now() + .seconds(3)
        while simulated == nil, !scanner.attempted.load(ordering: .relaxed), WallClock.now() < deadline {
            usleep(5_000)
        }
        let beacons = engine.perform { e, _ in (e.beaconCount, []) } ?? 0
        notifier.ready(status: statusLine(beacons: beacons, store: store, adapters: adapters))
        verifyInBackground(store)
        if simulated != nil {
            log(
                "info: simulation.started receivers=\(config.receivers.count) tags=\(config.assets.count) "
                    + "seed=\(simulationSeed!) next=no BlueZ; sightings come from the site simulator")
        }
        log("info: beacond.started gateway=\(config.gateway.id) version=\(BeaconVersion.string)")
        inputs.wait()
        reloads.cancel()
        // Events held while the disk was full get one last try before the webhooks' last attempt.
        publisher.retryHeld(now: true)
        let held = publisher.held.events
        if held > 0 {
            if keep.isWhole {
                log(
                    "warning: state.events_kept held=\(held) dir=\(keep.directory) next=the state store "
                        + "could not write them before the stop; they and the region and zone states are taken back "
                        + "at the next start (the directory lasts until a reboot, the state directory's reserve "
                        + "keeps the alerts through one)")
            } else {
                log(
                    "error: state.events_lost held=\(held) "
                        + "next=the state store could not write them before the stop")
            }
        }
        for worker in publisher.workers { worker.stop() }
        server.stop()
        outputs.wait()
        signals.forEach { $0.cancel() }
        let c = engine.counters
        log(
            "info: engine.summary sightings=\(c.sightings) decoded=\(c.decode.decoded) beacons=\(engine.beaconCount) "
                + "asset_tags=\(c.assetTagSightings) not_beacons=\(c.decode.totalNonMatches) without_identity=\(c.framesWithoutIdentity) "
                + "dbus_signals=\(scanner.signalsReceived.load(ordering: .relaxed))")
        log("info: beacond.stopped")
    }

    /// The journal (with fields) under systemd, standard error otherwise; warnings and errors
    /// are kept for `/v1/status`.
    func log(_ line: String) {
        journal.write(line)
        if line.hasPrefix("warning") || line.hasPrefix("error") {
            errors.record(JournalLog.escapingControlCharacters(line))
        }
    }

    func start(in group: DispatchGroup, _ body: @escaping @Sendable () -> Void) {
        group.enter()
        detachThread {
            body()
            group.leave()
        }
    }

    /// SIGTERM and SIGINT begin an orderly stop.
    private func handleStopSignals(_ stop: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
        // A parent (a test harness, a badly written supervisor) may hand us a blocked signal
        // mask; a daemon that cannot hear SIGTERM cannot flush and stop cleanly.
        var mask = sigset_t()
        sigemptyset(&mask)
        for number in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&mask, number) }
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
        return [SIGTERM, SIGINT].map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                log("info: beacond.stopping signal=\(number)")
                stop()
            }
            source.resume()
            return source
        }
    }
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
