import ArgumentParser
import BeaconConfig
import BeaconCore
import BeaconRuntime
import Glibc
import Logging
import POSIX
import Publishing
import Storage
import Synchronization

/// What the daemon takes from the state store at start: region states, the API's region
/// changes, and the webhooks' outboxes.
extension LiveDaemon {
    /// The state store under `gateway.state_dir`. When its file cannot be opened (a directory
    /// beacond may not write, a full disk with a corrupt file to replace) the daemon runs on,
    /// says so, and holds its events as it does on a full disk; the file is tried again at each
    /// write, and once it opens the held events are stored and delivered and the API's region
    /// changes applied (`applyLateStore`); the saved region states are for the next start.
    /// Refuses to run on a state directory another daemon holds (exit 69, as for its socket).
    func lockStateDirectory() throws {
        switch StateDirectoryLock.acquire(directory: config.gateway.stateDir) {
        case .held:
            return
        case let .heldByAnother(pid):
            logger.error(
                "state.locked",
                metadata: [
                    "dir": "\(config.gateway.stateDir)", "holder_pid": "\(pid.map(String.init) ?? "unknown")",
                    "next": "another beacond uses this state_dir; give each daemon its own gateway.state_dir",
                ])
            throw ExitCode(ExitStatus.unavailable)
        case let .unavailable(reason):
            logger.warning(
                "state.lock_unavailable",
                metadata: ["dir": "\(config.gateway.stateDir)", "error": "\(reason)", "next": "running unlocked"])
        }
    }

    func openStore(late: LateOpening) -> StateStore {
        // What names a damaged file set aside or copied: the time in seconds.
        let suffix: @Sendable () -> String = { String(WallClock.now().nanoseconds / 1_000_000_000) }
        let store = StateStore.opening(
            directory: config.gateway.stateDir, retention: config.history, setAsideSuffix: suffix,
            onOpen: { [logger] opened in
                if let setAside = opened.setAside {
                    logger.error(
                        "state.corrupt",
                        metadata: [
                            "moved_to": "\(setAside)",
                            "next":
                                "started a new state store: region states, the history and undelivered webhook events in the old file are not restored",
                        ])
                }
                if let failure = opened.failedBefore {
                    logger.info(
                        "state.available",
                        metadata: [
                            "file": "\(config.gateway.stateDir)", "failed_before": "\(failure)",
                            "next": "held events are stored and delivered, and the API's region changes applied",
                        ])
                    late.opened()
                }
            })
        store.recoverWhenCorrupt(
            copySuffix: suffix,
            report: { [logger] in Self.logCorruptWhileRunning($0, to: logger) })
        do {
            try store.open()
        } catch {
            logger.error(
                "state.unavailable",
                metadata: [
                    "dir": "\(config.gateway.stateDir)", "error": "\(error)",
                    "next":
                        "events are held in memory (and in the runtime directory) and webhooks wait; the state store is tried again at each write",
                ])
        }
        return store
    }

    /// The state directory's `DiskReserve`, made at the first start: room on the state disk
    /// for the alerts and states a full disk would otherwise keep only until a reboot. Nil,
    /// and said, when it cannot be made (the disk is full already, or the store is not open).
    func openReserve(_ store: StateStore) -> DiskReserve? {
        let path = config.gateway.stateDir + "/" + DiskReserve.fileName
        guard store.openFailure == nil else { return nil }
        do {
            return try DiskReserve(path: path)
        } catch {
            logger.warning(
                "state.reserve_unavailable",
                metadata: [
                    "path": "\(path)", "error": "\(error)",
                    "next":
                        "if the disk fills, alerts held meanwhile survive a restart but not a reboot; it is made again at the next start",
                ])
            return nil
        }
    }

    /// Logs the state file found corrupt while running and emptied.
    static func logCorruptWhileRunning(_ r: SQLiteDatabase.Report, to logger: Logger) {
        var metadata: Logger.Metadata = [
            "error": "\(r.error)", "carried": "\(r.carried.joined(separator: ","))",
            "lost": "\(r.lost.joined(separator: ","))",
        ]
        switch r.copy {
        case let .success(path)?: metadata["copied_to"] = "\(path)"
        case let .failure(error)?: metadata["copy_failed"] = "\(error)"
        case nil: metadata["copy"] = "none"
        }
        let lost = r.lost.isEmpty ? "" : " and the tables \(r.lost.joined(separator: ","))"
        metadata["next"] = """
            the state file was emptied in place and beacond goes on with it: the history\(lost) went with \
            the damage; region and zone states are written again from memory
            """
        logger.error("state.corrupt_while_running", metadata: metadata)
    }

    /// Applies the regions added or removed through the API (over the file's regions), then
    /// puts back the saved region states: no second enter for a region that stayed inside,
    /// an exit dated from the last sighting for one whose beacons left.
    /// `assetsKept`: the runtime directory holds newer zone memberships, which replace the
    /// file's whole (an asset the file has in a zone may have left it since).
    func restoreRegions(from store: StateStore, into engine: inout BeaconEngine, assetsKept: Bool = false) {
        do {
            let (overrides, _) = try applyAPIChanges(from: store, to: &engine, clients: config.clients)
            let (snapshots, skipped) = try store.loadRegions()
            let restored = snapshots.filter { engine.restore($0) }.count
            let (assets, skippedAssets) = assetsKept ? ([], 0) : try store.loadAssets()
            let restoredAssets = assets.filter { engine.restore($0) }.count
            let ahead = snapshots.filter { $0.lastSeen > engine.now }.count
            if ahead > 0 {
                logger.warning(
                    "state.saved_ahead_of_clock",
                    metadata: [
                        "regions": "\(ahead)",
                        "next":
                            "this clock is behind the one that saved them (no battery-backed clock?); their last sightings are taken as now",
                    ])
            }
            logger.info(
                "state.restored",
                metadata: [
                    "regions": "\(restored)", "redefined_or_gone": "\(snapshots.count - restored)",
                    "unreadable": "\(skipped)", "api_changes": "\(overrides)", "assets_in_zones": "\(restoredAssets)",
                    "assets_not_restored": "\(assets.count - restoredAssets + skippedAssets)",
                ])
        } catch {
            logger.warning("state.unreadable", metadata: ["error": "\(error)", "next": "regions start unknown"])
        }
    }

    /// Applies the regions added or removed and the alarms switched through the API, as the
    /// state file holds them, over the configuration's; returns how many changes there were and
    /// the events of applying them. A region the engine already has as saved is left as it is.
    func applyAPIChanges(from store: StateStore, to engine: inout BeaconEngine, clients: [ClientSpec]) throws
        -> (changes: Int, events: [Event])
    {
        try store.forgetRemovals(keepingRegionsOf: clients)
        let overrides = try store.loadOverrides()
        var events: [Event] = []
        for change in overrides {
            switch change {
            case let .monitor(client, region):
                // Kept by an earlier version that took any id through the API: the file's
                // grammar applies now, and such a region is left out (logged, escaped).
                if let problem = Identifier.problem(client) ?? Identifier.problem(region.id) {
                    logger.warning(
                        "state.api_region_skipped",
                        metadata: ["client": "\(client)", "region": "\(region.id)", "reason": "\(problem)"])
                    continue
                }
                guard !engine.regionStatuses(client: client).contains(where: { $0.spec == region }) else { continue }
                events += engine.monitor(client: client, region: region, at: engine.now).events
            case let .remove(client, region): engine.stopMonitoring(client: client, region: region)
            }
        }
        for (alarm, active) in try store.loadAlarmFlags() { engine.setAlarm(alarm, active: active) }
        return (overrides.count, events)
    }

    /// What a state file opened late (`openStore`) holds for the running daemon: the API's
    /// region and alarm changes, applied on the engine's thread (queued: this may be called on
    /// it), and webhooks the configuration no longer names retired. Saved region and zone
    /// states are not: the engine has been running and reporting its own since the start.
    func applyLateStore(_ store: StateStore, engine: LiveEngine, running: RunningConfig) {
        let current = running.current
        engine.submit(
            .call { [logger] e, _ in
                do {
                    let (changes, events) = try applyAPIChanges(from: store, to: &e, clients: current.clients)
                    logger.info(
                        "state.api_changes_applied", metadata: ["changes": "\(changes)", "next": "as at a start"])
                    return events
                } catch {
                    logger.warning(
                        "state.unreadable",
                        metadata: ["error": "\(error)", "next": "the API's region changes apply at the next start"])
                    return []
                }
            })
        retireRemovedWebhooks(store: store, specs: current.webhooks)
    }

    /// Retires what waits for webhooks the configuration no longer names, at start (on a
    /// reload each removed webhook's worker does it after its last attempt): their events
    /// become dead letters, shown by `beaconctl outbox`, not a backlog that never drains. A
    /// webhook renamed is a removed one and a new one.
    func retireRemovedWebhooks(store: StateStore, specs: [WebhookSpec]) {
        do {
            let moved = try store.retireWebhooks(keeping: Set(specs.map(\.id)).union(siteOutboxes), at: WallClock.now())
            for (webhook, count) in moved.sorted(by: { $0.key < $1.key }) {
                WebhookWorker.logRemoved(webhook: webhook, undelivered: count, to: logger)
            }
        } catch {
            logger.error("webhook.retire_failed", metadata: ["error": "\(error)"])
        }
    }

    func makeWebhookWorkers(store: StateStore) -> [WebhookWorker] {
        webhookSettings(config.webhooks).map { makeWebhookWorker($0, store: store) }
    }

    func makeWebhookWorker(
        _ settings: WebhookWorker.Settings, store: StateStore, transport: (any BatchTransport)? = nil
    ) -> WebhookWorker {
        var role: (@Sendable () -> DeliveryRole)?
        var onDelivered: (@Sendable (String, Timestamp) -> Void)?
        if let gate = deliveryGate {
            let id = settings.id
            role = { gate.role(webhook: id, at: WallClock.now()) }
            onDelivered = { gate.deliveredHere(webhook: $0, through: $1) }
        }
        let hooks = WebhookWorker.Hooks(
            elapsed: BootClock.elapsed, role: role, onDelivered: onDelivered, acks: unsavedAcks)
        return WebhookWorker(
            settings: settings, store: store, clock: WallClock.now, logger: logger, transport: transport, hooks: hooks)
    }

    /// Each webhook's settings, its secret file read now.
    func webhookSettings(_ specs: [WebhookSpec]) -> [WebhookWorker.Settings] {
        specs.map { hook in
            var secret: [UInt8]?
            if let path = hook.secretFile {
                do {
                    secret = try Self.signingKey(readSecretFile(path), hook.signature)
                } catch {
                    logger.error(
                        "webhook.secret_unreadable",
                        metadata: [
                            "webhook": "\(hook.id)", "file": "\(path)", "error": "\(error)", "next": "sending unsigned",
                        ])
                }
            }
            var settings = WebhookWorker.Settings(
                id: hook.id, url: hook.url, events: EventTypeGlob(hook.events), secret: secret,
                signature: hook.signature,
                schedule: DeliverySchedule(
                    maxEvents: hook.batchMaxEvents, maxDelay: hook.batchMaxDelay, maxAge: hook.maxAge),
                timeout: hook.timeout)
            settings.gateway = config.gateway.id
            return settings
        }
    }
}

extension LiveDaemon {
    /// The HMAC key a secret file's text gives under `signature`. A `whsec_` secret that
    /// `--check-config` accepted but was edited since is refused, not used as another key.
    static func signingKey(_ text: String, _ signature: WebhookSignature) throws(WebhookSignature.SecretProblem)
        -> [UInt8]
    {
        switch signature {
        case .beacond: Array(text.utf8)
        case .standard: try WebhookSignature.standardKey(text).get()
        }
    }
}

/// What a state file opened late needs done, once the daemon can do it: the file may open at
/// any write, even before the engine exists.
final class LateOpening: Sendable {
    private let state = Mutex<(handler: (@Sendable () -> Void)?, pending: Bool)>((nil, false))

    /// The file opened after failing: run the handler, now or when there is one.
    func opened() {
        let handler = state.withLock { s -> (@Sendable () -> Void)? in
            if s.handler == nil { s.pending = true }
            return s.handler
        }
        handler?()
    }

    /// What to do; run at once if the file has opened already.
    func handle(_ handler: @escaping @Sendable () -> Void) {
        let pending = state.withLock { s -> Bool in
            s.handler = handler
            defer { s.pending = false }
            return s.pending
        }
        if pending { handler() }
    }
}
