import BeaconConfig
import BeaconCore
import BeaconRuntime
import BlueZ
import Dispatch
import Logging
import POSIX
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
    /// Reloads applied and refused since the start (`beacond_config_reloads_total`).
    private let reloads = Mutex((applied: 0, refused: 0))
    var reloadCounts: (applied: Int, refused: Int) { reloads.withLock { $0 } }
    func refused() { reloads.withLock { $0.refused += 1 } }

    init(_ config: Config, digest: String, at t: Timestamp) {
        value = Mutex(Loaded(config: config, digest: digest, at: t))
    }
    var current: Config { value.withLock { $0.config } }
    var loaded: (digest: String, at: Timestamp, needsRestart: [String]) {
        value.withLock { ($0.digest, $0.at, $0.needsRestart) }
    }

    func replace(_ config: Config, digest: String, at t: Timestamp, needsRestart: [String]) {
        value.withLock { $0 = Loaded(config: config, digest: digest, at: t, needsRestart: needsRestart) }
        reloads.withLock { $0.applied += 1 }
    }
}

/// SIGHUP (SPEC §2): read the file again; a bad file is refused with the same located
/// messages and the running configuration stays. A good one is applied in place: regions,
/// monitoring settings, assets, zones, alarms and webhooks change without losing region
/// states (unchanged regions give no second enter) or outbox contents (it is in the store).
extension LiveDaemon {
    /// How the scanner uses BlueZ, from the `bluetooth:` section and, with
    /// `calibration.advertise`, the advertisement of each of this gateway's receivers (at
    /// start and on a reload).
    static func scannerSettings(_ config: Config) -> ScannerSettings {
        let bluetooth = config.bluetooth
        var settings = ScannerSettings(
            adapters: bluetooth.adapters.map(Set.init), minRSSI: bluetooth.minRSSI, passive: bluetooth.scan == .passive,
            silenceRestart: bluetooth.silenceRestart, deviceTTL: bluetooth.deviceTTL)
        guard config.calibration.advertise else { return settings }
        for r in config.ownReceivers {
            let id = AutoCalibration.identity(of: r.id)
            settings.advertisements[r.adapter ?? r.id] = BeaconAdvertisement(
                receiver: r.id, uuid: config.calibration.uuid, major: id.major, minor: id.minor,
                txPower: Int16(config.calibration.txPower))
        }
        return settings
    }

    /// Reads the file again and tells each service its new settings (`ServiceGroup.apply`).
    func reload(running: RunningConfig, services: ServiceGroup) {
        notifier.reloading()
        logger.info("config.reloading", metadata: ["file": "\(configPath)"])
        let new: Config
        let text: String
        do {
            text = try readTextFile(configPath)
            let warnings: [ConfigError]
            (new, warnings) = try ConfigLoader.loadReporting(
                yaml: text, file: configPath, defaultGatewayID: ConfigFile.hostName(),
                fileReadable: secretFileProblem, secretText: secretFileText, fileHead: fileHead)
            Self.logWarnings(warnings, to: logger)
        } catch let error as ConfigErrors {
            running.refused()
            for e in error.errors { logger.error("config.reload_refused", metadata: ["error": "\(e.description)"]) }
            notifier.ready(status: "reload refused (\(error.errors.count) errors); running the previous configuration")
            return
        } catch {
            running.refused()
            logger.error("config.reload_refused", metadata: ["file": "\(configPath)", "error": "\(error)"])
            notifier.ready(status: "reload refused; running the previous configuration")
            return
        }
        let old = running.current
        let reload = ConfigReload(from: old, to: new)
        if !reload.needsRestart.isEmpty {
            logger.warning(
                "config.needs_restart",
                metadata: [
                    "settings": "\(reload.needsRestart.joined(separator: ","))",
                    "next": "these keep their old values until systemctl restart beacond",
                ])
        }
        applyLogLevel(from: old, to: new)
        let done = services.apply(reload, from: old)
        running.replace(
            reload.running, digest: ConfigDigest.of(text), at: WallClock.now(), needsRestart: reload.needsRestart)
        logger.info("config.reloaded", metadata: done)
        notifier.ready(status: "configuration reloaded")
    }

    /// `gateway.log_level` on a reload, unless `--log-level` set it: the daemon logs at the new
    /// level from this line on. (The loader has checked the name.)
    func applyLogLevel(from old: Config, to new: Config) {
        guard new.gateway.logLevel != old.gateway.logLevel,
            let level = JournalLog.Level(name: new.gateway.logLevel.rawValue)
        else { return }
        if logLevelFromCommandLine {
            logger.warning(
                "config.log_level_kept",
                metadata: [
                    "running": "\(journal.threshold)", "file_level": "\(level)",
                    "next": "--log-level was given on the command line and wins over gateway.log_level",
                ])
            return
        }
        // Said at the more verbose of the two levels, so that the change shows either way.
        let was = journal.threshold
        let tell = { logger.notice("config.log_level", metadata: ["to": "\(level)", "was": "\(was)"]) }
        if level >= was { tell() }  // less verbose from now on: said before
        journal.setThreshold(level)
        if level < was { tell() }
    }
}

/// SIGHUPs, applied one after another on a thread of their own (the signal thread stays free
/// to take a SIGTERM while a reload waits for the start to finish), and none once the stop
/// has begun. A thread, not a dispatch queue: libdispatch would set its worker's nice value,
/// which the unit's system call filter refuses (logged as "Failed to set thread priority").
final class Reloads: Sendable {
    private let wanted = DispatchSemaphore(value: 0)
    private let stopped = Atomic(false)

    init(_ apply: @escaping @Sendable () -> Void) {
        detachThread(named: "beacond-reload") { [self] in
            while true {
                wanted.wait()
                if !stopped.load(ordering: .acquiring) { apply() }
            }
        }
    }

    func request() { wanted.signal() }

    func cancel() { stopped.store(true, ordering: .releasing) }
}
