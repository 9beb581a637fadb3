import APIModel
import ArgumentParser
import BeaconConfig
import BeaconCore
import BeaconRuntime

#if canImport(Glibc)
    import Glibc
#endif

/// `beaconctl doctor`: what an operator checks first on a gateway that "hears nothing" — the
/// gateway analogue of a mobile SDK's capability check. Each check prints a verdict and, when
/// it is not OK, the fix. Exit status 1 when any check fails.
struct Doctor: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Check the gateway; each problem comes with its fix.")
    @OptionGroup var common: Common
    @Option(help: "The configuration file to check (default: the one the running daemon names, else \(defaultConfig)).")
    var config: String?
    static let defaultConfig = "/etc/beacond/beacond.yaml"
    @Option(help: "Where rfkill state is read (for tests).") var rfkillDir = "/sys/class/rfkill"

    enum Verdict: String { case ok = "ok", warn = "WARN", fail = "FAIL", skip = "skip" }

    struct Check {
        var name: String
        var verdict: Verdict
        var detail: String
        var fix: String?
        /// Lines shown under the check, each one line (the entries to paste).
        var entries: [String] = []
    }

    /// A detail as shown: one line, bounded.
    static func shown(_ text: String) -> String { OutsideText.line(text, limit: 600) }

    func run() throws {
        var status: StatusReport?
        let daemon: Check
        do {
            status = StatusReport(json: try common.client.get("/v1/status"))
            daemon = Check(name: "daemon", verdict: .ok, detail: "beacond answers on \(common.socket)")
        } catch {
            daemon = Check(
                name: "daemon", verdict: .fail, detail: error.message,
                fix: "systemctl start beacond, then journalctl -u beacond -e for why it stopped")
        }
        // The file the daemon runs from, unless told otherwise: a unit started with another
        // --config must not be judged by /etc/beacond/beacond.yaml.
        let file = config ?? status?.configFile ?? Self.defaultConfig
        let (configChecks, loaded) = configCheckAndWebhooks(file, status: status)
        // What the daemon reaches from its own sandbox (nil from a daemon too old to say).
        let seen = status == nil ? nil : DaemonReachability(try? common.client.get("/v1/reachability"))
        var checks = configChecks
        if let loaded { checks += libraryChecks(loaded) }
        if let loaded, let site = loaded.site {
            checks.append(brokerCheck(site, gateway: loaded.gateway.id, seen: seen))
        }
        checks.append(daemon)
        let simulated = status?.simulated == true
        if simulated {
            for name in ["rfkill", "bluetoothd", "dbus permission", "adapters", "discovery"] {
                checks.append(
                    Check(
                        name: name, verdict: .skip,
                        detail: "the daemon runs on a simulated site (--simulate), not BlueZ"))
            }
        } else {
            checks += rfkillChecks()
        }
        if let status {
            checks += daemonChecks(status, bluetooth: !simulated, seen: seen)
            if let loaded, loaded.calibration.advertise, !simulated { checks.append(advertisingCheck(loaded, status)) }
        } else {
            for name in ["bluetoothd", "dbus permission", "adapters", "discovery", "advertisements", "webhooks"] {
                checks.append(Check(name: name, verdict: .skip, detail: "needs the daemon"))
            }
        }
        checks.append(esphomeDiscoveryCheck(configured: loaded?.esphome ?? []))
        if common.json {
            writeOut(
                JSONValue.array(
                    checks.map { c in
                        .object([
                            ("check", .string(c.name)), ("verdict", .string(c.verdict.rawValue.lowercased())),
                            ("detail", .string(([c.detail] + c.entries).joined(separator: "\n    "))),
                            ("fix", c.fix.map { .string($0) } ?? .null),
                        ])
                    }
                ).serialized)
        } else {
            for c in checks {
                // Details carry what the daemon and devices said: one line each, always.
                writeOut("[\(c.verdict.rawValue)] \(OutsideText.line(c.name, limit: 80)): \(Self.shown(c.detail))")
                for entry in c.entries { writeOut("    " + Self.shown(entry)) }
                if let fix = c.fix, c.verdict == .fail || c.verdict == .warn {
                    writeOut("       fix: \(Self.shown(fix))")
                }
            }
        }
        if checks.contains(where: { $0.verdict == .fail }) { throw ExitCode(1) }
    }

    /// The configuration's verdict, and how many webhooks it names. A valid file that the
    /// daemon is not running (edited since it was loaded, or with sections a reload could not
    /// apply) is a warning: the commonest reason an edit "does nothing".
    func configCheckAndWebhooks(_ config: String, status: StatusReport?) -> (checks: [Check], loaded: Config?) {
        let text: String
        do {
            text = try readTextFile(config)
        } catch {
            let check = Check(
                name: "config", verdict: .fail, detail: "\(config): \(error)",
                fix: "create it (see /usr/share/doc/beacond/example.yaml) or pass --config")
            return ([check], nil)
        }
        do {
            let (loaded, warnings) = try ConfigLoader.loadReporting(
                yaml: text, file: config, defaultGatewayID: "beacond",
                fileReadable: secretFileProblem, secretText: secretFileText, fileHead: fileHead)
            // Valid, but set up to do less than it says: each said with its place in the file.
            let advice = warnings.map { warning in
                var said = warning
                said.isWarning = false  // the verdict says it
                return Check(
                    name: "config", verdict: .warn, detail: said.description,
                    fix: "correct that line if it is not what you meant, then systemctl reload beacond")
            }
            return ([runningCheck(config, text: text, status: status)] + advice, loaded)
        } catch {
            let check = Check(
                name: "config", verdict: .fail, detail: error.errors.map(\.description).joined(separator: "; "),
                fix:
                    "correct those lines, then `beacond --check-config --config \(config)` and `systemctl reload beacond`"
            )
            return ([check], nil)
        }
    }

    /// Whether the daemon runs what the valid file `config` says (only when it runs from it).
    func runningCheck(_ config: String, text: String, status: StatusReport?) -> Check {
        guard let status, status.configFile == config else {
            return Check(name: "config", verdict: .ok, detail: "\(config) is valid")
        }
        if let digest = status.configDigest, digest != ConfigDigest.of(text) {
            return Check(
                name: "config", verdict: .warn,
                detail: "\(config) is valid but changed since the daemon loaded it "
                    + "(\(status.configLoadedAt ?? "-")): it runs the earlier one",
                fix: "systemctl reload beacond")
        }
        let pending = status.configNeedsRestart
        if !pending.isEmpty {
            return Check(
                name: "config", verdict: .warn,
                detail:
                    "\(config) is loaded, but changed settings wait for a restart: \(pending.joined(separator: ", "))",
                fix: "systemctl restart beacond")
        }
        return Check(name: "config", verdict: .ok, detail: "\(config) is valid and is what the daemon runs")
    }

    /// Bluetooth radios blocked by rfkill (soft: a setting; hard: a switch).
    func rfkillChecks() -> [Check] {
        guard let dir = opendir(rfkillDir) else {
            return [Check(name: "rfkill", verdict: .skip, detail: "\(rfkillDir) is not readable")]
        }
        defer { closedir(dir) }
        var blocked: [String] = []
        var radios = 0
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard !name.hasPrefix(".") else { continue }
            let base = "\(rfkillDir)/\(name)"
            guard (try? readTextFile(base + "/type"))?.hasPrefix("bluetooth") == true else { continue }
            radios += 1
            let soft = (try? readTextFile(base + "/soft"))?.hasPrefix("1") == true
            let hard = (try? readTextFile(base + "/hard"))?.hasPrefix("1") == true
            if hard {
                blocked.append("\(name) (hard: a switch or the firmware)")
            } else if soft {
                blocked.append("\(name) (soft)")
            }
        }
        if !blocked.isEmpty {
            return [
                Check(
                    name: "rfkill", verdict: .fail, detail: "Bluetooth blocked: \(blocked.joined(separator: ", "))",
                    fix: "rfkill unblock bluetooth (a hard block needs the switch or the BIOS)")
            ]
        }
        return [Check(name: "rfkill", verdict: .ok, detail: radios == 0 ? "no Bluetooth radio listed" : "not blocked")]
    }

    /// The checks on what the daemon reports; `bluetooth: false` leaves out BlueZ's.
    func daemonChecks(_ s: StatusReport, bluetooth: Bool = true, seen: DaemonReachability? = nil) -> [Check] {
        var checks = bluetooth ? bluetoothChecks(s) : []
        let sightings = s.counts.sightings
        checks.append(
            sightings > 0
                ? Check(
                    name: "advertisements", verdict: .ok,
                    detail: "\(Int(sightings)) heard, \("\(s.counts.beacons)") beacons")
                : Check(
                    name: "advertisements", verdict: .warn, detail: "none heard yet",
                    fix: "are beacons powered and in range? is bluetooth.min_rssi too high?"))
        if let behind = engineCheck(s) { checks.append(behind) }
        checks += siteChecks(s)
        if let store = s.stateStore {
            checks.append(storageCheck(store, status: s))
            if let pinned = pinnedLogCheck(store, status: s) { checks.append(pinned) }
            if let reserve = reserveCheck(store, status: s) { checks.append(reserve) }
        }
        checks += s.webhooks.map { webhookCheck($0, seen: seen) }
        checks += s.esphome.map(esphomeCheck)
        return checks
    }
}

extension Doctor {
    /// Asset positions and relays: receivers that hear assets but have no position, and
    /// relays whose records arrive stamped ahead of this gateway or too old to use. Shown only
    /// when there is something to say: neither is a check every gateway needs.
    func siteChecks(_ s: StatusReport) -> [Check] {
        var checks: [Check] = []
        if !s.unplacedReceivers.isEmpty {
            let unplaced = s.unplacedReceivers
            checks.append(
                Check(
                    name: "receivers", verdict: .warn,
                    detail: "assets heard by receivers with no position, not used for positions: "
                        + unplaced.map { "\($0.0) (\($0.1) sightings)" }.joined(separator: ", "),
                    fix: "add them to receivers: with their position (the id must be the adapter's name or the "
                        + "relay's \"receiver\"), then systemctl reload beacond"))
        }
        let ahead = s.counts.clockAhead
        let stale = s.counts.stale
        if ahead > 0 || stale > 0 {
            let warnings = s.lastErrors.filter {
                $0.contains("sightings.clock_ahead") || $0.contains("sightings.stale")
            }
            checks.append(
                Check(
                    name: "relay clocks", verdict: .warn,
                    detail: "\(Int(ahead)) sightings stamped ahead of this gateway, \(Int(stale)) too old to use"
                        + (warnings.last.map { "; \($0)" } ?? ""),
                    fix: "set the relays' clocks by NTP (timedatectl set-ntp true); a relay that buffers while "
                        + "offline should not send what is older than monitoring.exit_timeout"))
        }
        return checks
    }
}

extension Doctor {
    /// With `calibration.advertise`: which of this gateway's receivers advertise, and which
    /// cannot (an adapter without LEAdvertisingManager1, or BlueZ refusing).
    func advertisingCheck(_ config: Config, _ s: StatusReport) -> Check {
        let mine = config.ownReceivers.map(\.id)
        let silent = mine.filter { !s.advertising.contains($0) }
        if silent.isEmpty {
            return Check(
                name: "calibration", verdict: .ok, detail: "advertising as \(s.advertising.joined(separator: ", "))")
        }
        let why = s.lastErrors.last { $0.contains("adapter.advertising") }
        return Check(
            name: "calibration", verdict: .warn,
            detail: "calibration.advertise is on, but \(silent.joined(separator: ", ")) "
                + "\(silent.count == 1 ? "does" : "do") not advertise" + (why.map { "; \($0)" } ?? ""),
            fix: "journalctl -u beacond | grep adapter.advertising: an adapter needs BlueZ's LEAdvertisingManager1 "
                + "(bluetoothctl show lists it) and a free advertising instance")
    }

    /// bluetoothd, its D-Bus policy, the adapters and discovery, as the daemon sees them.
    func bluetoothChecks(_ s: StatusReport) -> [Check] {
        var checks: [Check] = []
        let errors = s.lastErrors
        let reachable = s.bluezReachable
        checks.append(
            reachable
                ? Check(name: "bluetoothd", verdict: .ok, detail: "org.bluez is on the system bus")
                : Check(
                    name: "bluetoothd", verdict: .fail, detail: "org.bluez is not on the system bus",
                    fix: "apt install bluez; systemctl enable --now bluetooth"))
        if let denied = errors.first(where: { $0.contains("AccessDenied") }) {
            checks.append(
                Check(
                    name: "dbus permission", verdict: .fail, detail: denied,
                    fix: "run beacond as a user in group bluetooth (the packaged unit does), then restart it"))
        } else if !reachable {
            // Nothing was asked of bluetoothd, so nothing was refused: that is no "ok".
            checks.append(
                Check(name: "dbus permission", verdict: .skip, detail: "not checked: bluetoothd is not on the bus"))
        } else {
            checks.append(Check(name: "dbus permission", verdict: .ok, detail: "no access errors"))
        }
        let adapters = s.adapters
        let present = adapters.filter(\.present)
        let unpowered = present.filter { !$0.powered }.map(\.adapter)
        if present.isEmpty {
            checks.append(
                Check(
                    name: "adapters", verdict: .fail, detail: "no Bluetooth adapter",
                    fix:
                        "plug in the dongle; `bluetoothctl list` should show it (check bluetooth.adapters in the config)"
                ))
        } else if !unpowered.isEmpty {
            checks.append(
                Check(
                    name: "adapters", verdict: .fail, detail: "powered off: \(unpowered.joined(separator: ", "))",
                    fix: "bluetoothctl power on (and rfkill unblock bluetooth)"))
        } else {
            checks.append(
                Check(
                    name: "adapters", verdict: .ok,
                    detail: present.map(\.adapter).joined(separator: ", ") + " powered"))
        }
        let discovering = present.filter(\.discovering)
        checks.append(
            discovering.isEmpty
                ? Check(
                    name: "discovery", verdict: present.isEmpty ? .skip : .fail, detail: "no adapter is discovering",
                    fix: "beacond restarts discovery itself; if this persists, see journalctl -u beacond")
                : Check(name: "discovery", verdict: .ok, detail: "\(discovering.count) adapter(s) scanning"))
        return checks
    }
}
