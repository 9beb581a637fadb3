import BeaconConfig
import BeaconCore
import BeaconRuntime
import BlueZ
import Logging
import POSIX
import Publishing
import Storage
import Synchronization

/// The parts the services share, built before them: the engine with what the last run left,
/// the publisher with its hooks, and what the engine does after each turn.
extension LiveDaemon {
    /// The engine, its regions and zones as the store (and, newer, the runtime directory or the
    /// disk reserve) left them.
    func restoredEngine(store: StateStore, keep: UnsavedKeep, start: Timestamp) -> (
        engine: BeaconEngine, unsaved: (events: [StateStore.StoredEvent], state: EngineSnapshot?)?
    ) {
        var core = BeaconEngine(configuration: config.engineConfiguration, start: start)
        let threads = config.engine.threads(available: availableCores())
        if threads > 1 { core.shardRunner = EngineThreads(threads: threads) }
        // States an earlier run could not save (a full disk) are newer than the store's: each
        // region's replaces the store's, and the assets' replace the store's whole.
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
        return (core, unsaved)
    }

    /// Events out: to the store's history and outbox, the webhooks' workers, and (`--print-events`)
    /// standard output. What the store cannot take is copied to the runtime directory until it
    /// can; what an earlier run held is adopted and tried at once.
    func makePublisher(
        store: StateStore, keep: UnsavedKeep, unsaved: (events: [StateStore.StoredEvent], state: EngineSnapshot?)?,
        siteEvents: MQTTBatchTransport?
    ) -> EventPublisher {
        let workers = makeWebhookWorkers(store: store) + [siteEvents.flatMap { makeSiteEventsWorker($0, store: store) }]
        let persistFailures = Mutex(FailureEpisode())
        // Retried every turn that changes a state and every 5 s: logged when it starts failing
        // and when it works again, not each time.
        let onStates: @Sendable (EngineSnapshot, (any Error)?) -> Void = { [logger] state, error in
            guard let error else {
                keep.statesSaved()
                if let took = persistFailures.withLock({ $0.succeeded(at: WallClock.now()) }) {
                    logger.info("state.saved_again", metadata: ["after_s": "\(Int(took.seconds.rounded()))"])
                }
                return
            }
            keep.statesUnsaved(state)
            if persistFailures.withLock({ $0.failed(at: WallClock.now()) }) {
                logger.error(
                    "state.write_failed",
                    metadata: [
                        "error": "\(error)",
                        "next": """
                        region and zone states are saved when the state store can write again; a restart \\
                        before that restores older ones
                        """,
                    ])
            }
        }
        let publisher = EventPublisher(
            gateway: config.site?.id ?? config.gateway.id, store: store, workers: workers.compactMap { $0 },
            echo: printEvents, clock: WallClock.now, logger: logger,
            hooks: .init(
                onStates: onStates, onHeldStored: { keep.eventsStored() }, onHold: { keep.held($0, dropped: $1) }))
        if let unsaved {
            publisher.adoptHeld(unsaved.events)
            publisher.retryHeld(now: true)
        }
        return publisher
    }

    /// After every engine turn, on its thread: the watchdog, held events, and the running
    /// totals of sightings shed and beacons evicted (told at once, then once a minute).
    func engineTurned(systemd: SystemdNotices, publisher: EventPublisher) -> @Sendable (LiveEngine, Timestamp) -> Void {
        let shedding = RunningTotalLog()
        let evictions = RunningTotalLog()
        return { [logger] engine, t in
            systemd.engineTurned(at: t)
            publisher.retryHeld()
            // Sightings the engine had no room for.
            if let report = shedding.report(total: engine.shedCount, at: t) {
                logger.warning(
                    "engine.behind",
                    metadata: report.metadata(
                        count: "sightings_dropped", at: t,
                        next: """
                            the engine cannot keep up with what the radios hear; fewer assets, a longer \\
                            positioning.publish_interval or a faster gateway
                            """))
            }
            // Beacons forgotten early because the table was full: a flood of made-up ones.
            if let report = evictions.report(total: engine.glance.counters.beaconsEvicted, at: t) {
                var metadata = report.metadata(
                    count: "count", at: t,
                    next:
                        "the stalest were forgotten; so many distinct beacons are likely spoofed (over the air or by a relay)"
                )
                metadata["limit"] = "\(BeaconEngine.defaultBeaconLimit)"
                logger.warning("beacons.evicted", metadata: metadata)
            }
        }
    }

    /// What the engine (and the radios) went through, at the stop.
    func logSummary(engine: LiveEngine, input: any DaemonService) {
        let c = engine.counters
        var metadata: Logger.Metadata = [
            "sightings": "\(c.sightings)", "decoded": "\(c.decode.decoded)", "beacons": "\(engine.beaconCount)",
            "asset_tags": "\(c.assetTagSightings)", "not_beacons": "\(c.decode.totalNonMatches)",
            "without_identity": "\(c.framesWithoutIdentity)",
        ]
        if let radio = input as? RadioInput {
            metadata["dbus_signals"] = "\(radio.scanner.signalsReceived.load(ordering: .relaxed))"
        }
        logger.info("engine.summary", metadata: metadata)
    }
}
