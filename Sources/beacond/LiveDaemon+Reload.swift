import BeaconConfig
import BeaconCore
import BeaconRuntime
import BlueZ
import Dispatch
import Publishing
import Storage
import Synchronization
import Systemd

#if canImport(Glibc)
    import Glibc
#endif

/// The configuration the daemon is running, replaced by a successful reload, and what
/// `/v1/status` says of it: the digest of the text it came from, when that was loaded, and
/// the sections the file changes that wait for a restart.
final class RunningConfig: Sendable {
    private struct Loaded {
        var config: Config
        var digest: String
        var at: Timestamp
        var needsRestart: [String] = []
    }

    private let value: Mutex<Loaded>
    init(_ config: Config, digest: String, at t: Timestamp) {
        value = Mutex(Loaded(config: config, digest: digest, at: t))
    }
    var current: Config { value.withLock { $0.config } }
    var loaded: (digest: String, at: Timestamp, needsRestart: [String]) {
        value.withLock { ($0.digest, $0.at, $0.needsRestart) }
    }

    func replace(_ config: Config, digest: String, at t: Timestamp, needsRestart: [String]) {
        value.withLock { $0 = Loaded(config: config, digest: digest, at: t, needsRestart: needsRestart) }
    }
}

/// SIGHUP (SPEC §2): read the file again; a bad file is refused with the same located
/// messages and the running configuration stays. A good one is applied in place: regions,
/// monitoring settings, assets, zones, alarms and webhooks change without losing region
/// states (unchanged regions give no second enter) or outbox contents (it is in the store).
extension LiveDaemon {
    /// How the scanner uses BlueZ, from the `bluetooth:` section (at start and on a reload).
    static func scannerSettings(_ bluetooth: BluetoothSettings) -> ScannerSettings {
        ScannerSettings(
            adapters: bluetooth.adapters.map(Set.init), minRSSI: bluetooth.minRSSI, passive: bluetooth.scan == .passive,
            silenceRestart: bluetooth.silenceRestart, deviceTTL: bluetooth.deviceTTL)
    }

    func handleReload(_ reload: @escaping @Sendable () -> Void) -> any DispatchSourceSignal {
        signal(SIGHUP, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: DispatchQueue(label: "beacond.reload"))
        source.setEventHandler(handler: reload)
        source.resume()
        return source
    }

    func reload(
        running: RunningConfig, engine: LiveEngine, scanner: BlueZScanner, publisher: EventPublisher,
        store: StateStore, outputs: DispatchGroup
    ) {
        notifier.reloading()
        log("info: config.reloading file=\(configPath)")
        let new: Config
        let text: String
        do {
            text = try readTextFile(configPath)
            new = try ConfigLoader.load(
                yaml: text, file: configPath, defaultGatewayID: ConfigFile.hostName(),
                fileReadable: secretFileProblem)
        } catch let error as ConfigErrors {
            for e in error.errors { log("error: config.reload_refused \(e.description)") }
            notifier.ready(status: "reload refused (\(error.errors.count) errors); running the previous configuration")
            return
        } catch {
            log("error: config.reload_refused \(configPath): \(error)")
            notifier.ready(status: "reload refused; running the previous configuration")
            return
        }
        let old = running.current
        let reload = ConfigReload(from: old, to: new)
        if !reload.needsRestart.isEmpty {
            log(
                "warning: config.needs_restart settings=\(reload.needsRestart.joined(separator: ",")) "
                    + "next=these keep their old values until systemctl restart beacond")
        }
        applyLogLevel(from: old, to: new)
        let summary = engine.perform { e, now in
            let applied = e.apply(reload, from: old, at: now)
            return (applied.summary, applied.events)
        }
        if reload.running.bluetooth != old.bluetooth {
            scanner.reconfigure(Self.scannerSettings(reload.running.bluetooth))
        }
        let webhooks = reloadWebhooks(new.webhooks, publisher: publisher, store: store, outputs: outputs)
        running.replace(
            reload.running, digest: ConfigDigest.of(text), at: WallClock.now(), needsRestart: reload.needsRestart)
        log(
            "info: config.reloaded regions_added=\(summary?.added ?? 0) regions_replaced=\(summary?.replaced ?? 0) "
                + "regions_removed=\(summary?.removed ?? 0) regions_unchanged=\(summary?.unchanged ?? 0) "
                + "site=\(summary?.siteReplaced == true ? "replaced" : "unchanged") webhooks=\"\(webhooks)\"")
        notifier.ready(status: "configuration reloaded")
    }

    /// `gateway.log_level` on a reload, unless `--log-level` set it: the daemon logs at the new
    /// level from this line on. (The loader has checked the name.)
    func applyLogLevel(from old: Config, to new: Config) {
        guard new.gateway.logLevel != old.gateway.logLevel, let level = JournalLog.Level(name: new.gateway.logLevel)
        else { return }
        if logLevelFromCommandLine {
            log(
                "warning: config.log_level_kept level=\(journal.threshold) file_level=\(level) "
                    + "next=--log-level was given on the command line and wins over gateway.log_level")
            return
        }
        // Said at the more verbose of the two levels, so that the change shows either way.
        let was = journal.threshold
        let line = "notice: config.log_level level=\(level) was=\(was)"
        if level >= was { log(line) }  // less verbose from now on: said before
        journal.setThreshold(level)
        if level < was { log(line) }
    }

    /// Webhooks on a reload. Each is built afresh from the file, its secret file read again
    /// (a rotated key takes effect on `systemctl reload`); a running worker whose settings,
    /// secret included, are the same keeps running, so an unchanged webhook neither restarts
    /// nor sends a batch twice; a changed one's new worker starts after the old one's last
    /// attempt, for the same reason. A kept webhook waiting on its backoff retries at once.
    /// Workers of removed webhooks dead-letter their backlog after their last attempt.
    /// Returns what was done, for the log.
    func reloadWebhooks(
        _ specs: [WebhookSpec], publisher: EventPublisher, store: StateStore, outputs: DispatchGroup
    ) -> String {
        let running = publisher.workers
        var next: [WebhookWorker] = []
        var started: [WebhookWorker] = []
        for settings in webhookSettings(specs) {
            if let same = running.first(where: { $0.settings == settings }) {
                // A reload is often the operator's "the receiver is fixed": retry at once.
                same.retryNow()
                next.append(same)
            } else {
                let fresh = makeWebhookWorker(settings, store: store)
                next.append(fresh)
                started.append(fresh)
            }
        }
        let stopped = running.filter { worker in !next.contains { $0 === worker } }
        guard !started.isEmpty || !stopped.isEmpty else { return "unchanged" }
        _ = publisher.replaceWorkers(next)
        let ids = Set(specs.map(\.id))
        for worker in stopped { worker.stop(ids.contains(worker.settings.id) ? .replaced : .removed) }
        for worker in started {
            // A changed webhook's new worker waits for the old one's last attempt.
            let predecessor = stopped.first { $0.settings.id == worker.settings.id }
            start(in: outputs) {
                predecessor?.waitUntilFinished()
                worker.run()
            }
        }
        return "\(started.count) started, \(next.count - started.count) kept, \(stopped.count) stopped"
    }
}
