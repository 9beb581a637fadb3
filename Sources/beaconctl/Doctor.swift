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
    }

    func run() throws {
        var status: JSONValue?
        let daemon: Check
        do {
            status = try common.client.get("/v1/status")
            daemon = Check(name: "daemon", verdict: .ok, detail: "beacond answers on \(common.socket)")
        } catch {
            daemon = Check(
                name: "daemon", verdict: .fail, detail: error.message,
                fix: "systemctl start beacond, then journalctl -u beacond -e for why it stopped")
        }
        // The file the daemon runs from, unless told otherwise: a unit started with another
        // --config must not be judged by /etc/beacond/beacond.yaml.
        let file = config ?? status?["config_file"]?.stringValue ?? Self.defaultConfig
        let (configVerdict, webhooks) = configCheckAndWebhooks(file)
        var checks = [configVerdict]
        if webhooks > 0 { checks.append(libcurlCheck()) }
        checks.append(daemon)
        let simulated = status?["input"]?.stringValue == "simulated"
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
            checks += daemonChecks(status, bluetooth: !simulated)
        } else {
            for name in ["bluetoothd", "dbus permission", "adapters", "discovery", "advertisements", "webhooks"] {
                checks.append(Check(name: name, verdict: .skip, detail: "needs the daemon"))
            }
        }
        if common.json {
            print(
                JSONValue.array(
                    checks.map { c in
                        .object([
                            ("check", .string(c.name)), ("verdict", .string(c.verdict.rawValue.lowercased())),
                            ("detail", .string(c.detail)), ("fix", c.fix.map { .string($0) } ?? .null),
                        ])
                    }
                ).serialized)
        } else {
            for c in checks {
                print("[\(c.verdict.rawValue)] \(c.name): \(c.detail)")
                if let fix = c.fix, c.verdict == .fail || c.verdict == .warn { print("       fix: \(fix)") }
            }
        }
        if checks.contains(where: { $0.verdict == .fail }) { throw ExitCode(1) }
    }

    /// beacond loads libcurl only when its first webhook starts, so a gateway without it runs
    /// until the first delivery fails; with webhooks configured, say so up front.
    func libcurlCheck() -> Check {
        guard let library = dlopen("libcurl.so.4", RTLD_LAZY | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "not found"
            return Check(
                name: "libcurl", verdict: .fail, detail: "webhooks need it: \(reason)",
                fix: "apt install libcurl4, then systemctl restart beacond")
        }
        dlclose(library)
        return Check(name: "libcurl", verdict: .ok, detail: "libcurl.so.4 loads (webhooks need it)")
    }

    /// The configuration's verdict, and how many webhooks it names.
    func configCheckAndWebhooks(_ config: String) -> (check: Check, webhooks: Int) {
        let text: String
        do {
            text = try readTextFile(config)
        } catch {
            let check = Check(
                name: "config", verdict: .fail, detail: "\(config): \(error)",
                fix: "create it (see /usr/share/doc/beacond/example.yaml) or pass --config")
            return (check, 0)
        }
        do {
            let loaded = try ConfigLoader.load(
                yaml: text, file: config, defaultGatewayID: "beacond",
                fileReadable: { access($0, R_OK) == 0 ? nil : String(cString: strerror(errno)) })
            return (Check(name: "config", verdict: .ok, detail: "\(config) is valid"), loaded.webhooks.count)
        } catch {
            let check = Check(
                name: "config", verdict: .fail, detail: error.errors.map(\.description).joined(separator: "; "),
                fix:
                    "correct those lines, then `beacond --check-config --config \(config)` and `systemctl reload beacond`"
            )
            return (check, 0)
        }
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
    func daemonChecks(_ s: JSONValue, bluetooth: Bool = true) -> [Check] {
        var checks = bluetooth ? bluetoothChecks(s) : []
        let sightings = s["counts"]?["sightings"]?.numberValue ?? 0
        checks.append(
            sightings > 0
                ? Check(
                    name: "advertisements", verdict: .ok,
                    detail: "\(Int(sightings)) heard, \(s["counts"]?["beacons"]?.cell ?? "0") beacons")
                : Check(
                    name: "advertisements", verdict: .warn, detail: "none heard yet",
                    fix: "are beacons powered and in range? is bluetooth.min_rssi too high?"))
        if let behind = engineCheck(s) { checks.append(behind) }
        checks += siteChecks(s)
        if let store = s["state_store"]?.stringValue { checks.append(storageCheck(store, status: s)) }
        checks += (s["webhooks"]?.items ?? []).map(webhookCheck)
        return checks
    }
}

extension Doctor {
    /// Asset positions and relays: receivers that hear assets but have no position, and
    /// relays whose records arrive stamped ahead of this gateway or too old to use. Shown only
    /// when there is something to say: neither is a check every gateway needs.
    func siteChecks(_ s: JSONValue) -> [Check] {
        var checks: [Check] = []
        if case let .object(unplaced)? = s["unplaced_receivers"], !unplaced.isEmpty {
            checks.append(
                Check(
                    name: "receivers", verdict: .warn,
                    detail: "assets heard by receivers with no position, not used for positions: "
                        + unplaced.map { "\($0.0) (\($0.1.cell) sightings)" }.joined(separator: ", "),
                    fix: "add them to receivers: with their position (the id must be the adapter's name or the "
                        + "relay's \"receiver\"), then systemctl reload beacond"))
        }
        let ahead = s["counts"]?["clock_ahead"]?.numberValue ?? 0
        let stale = s["counts"]?["stale"]?.numberValue ?? 0
        if ahead > 0 || stale > 0 {
            let warnings = (s["last_errors"]?.items ?? []).map(\.cell).filter {
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
    /// A webhook: disabled (410), failing, events it never delivered, and whether its host
    /// takes a connection from this gateway at all (`Reachability`), which a webhook that has
    /// had nothing to send yet shows no other way.
    func webhookCheck(_ hook: JSONValue) -> Check {
        let name = "webhook \(hook["id"]?.cell ?? "?")"
        let url = hook["url"]?.stringValue ?? ""
        if hook["state"]?.stringValue == "disabled" {
            return Check(
                name: name, verdict: .fail,
                detail: "disabled: \(hook["disabled"]?.cell ?? "-"); \(Outbox.dead(hook)) dead letters",
                fix: "fix the receiver, then change the webhook's url and reload")
        }
        let endpoint = Reachability.endpoint(of: url)
        let delivering = hook["state"]?.stringValue != "retrying" && hook["delivered"]?.numberValue ?? 0 > 0
        if let endpoint, let failure = Reachability.failure(host: endpoint.host, port: endpoint.port) {
            // It has delivered: through a proxy (libcurl takes https_proxy from the daemon's
            // environment, which this check does not use), or the receiver went down since.
            guard !delivering else {
                return Check(
                    name: name, verdict: .warn,
                    detail: "\(hook["delivered"]?.cell ?? "0") delivered, but cannot connect to \(failure) now",
                    fix: "through a proxy this is expected; else the receiver went down, and the next event will "
                        + "wait in the outbox until it is back")
            }
            return Check(
                name: name, verdict: .fail,
                detail: "cannot connect to \(failure); \(hook["pending"]?.cell ?? "0") waiting",
                fix: "check \(url), the gateway's DNS and firewall (or, behind a proxy, https_proxy in beacond's "
                    + "environment); events wait in the outbox up to max_age")
        }
        let reachable = endpoint.map { " (\($0.host):\($0.port) takes connections)" } ?? ""
        if hook["state"]?.stringValue == "retrying" {
            return Check(
                name: name, verdict: .warn,
                detail: "failing: \(hook["last_error"]?.cell ?? "-"); \(hook["pending"]?.cell ?? "0") waiting"
                    + reachable,
                fix: "\(url) takes connections, so the fault is in the exchange: a TLS certificate, the path, "
                    + "or the receiver answering errors (its logs)")
        }
        if hook["dead_letters"]?.numberValue ?? 0 > 0 {
            return Check(
                name: name, verdict: .warn,
                detail: "\(hook["delivered"]?.cell ?? "0") delivered; \(Outbox.dead(hook)) never delivered" + reachable,
                fix: "beaconctl outbox lists them; a longer max_age keeps events through a longer outage")
        }
        return Check(name: name, verdict: .ok, detail: "\(hook["delivered"]?.cell ?? "0") delivered" + reachable)
    }
}

extension Doctor {
    /// Sightings dropped because the engine had 50,000 waiting: it cannot keep up with what the
    /// radios and relays hear, or something held it up (a state file locked by another process).
    /// Said only when it happened; a warning, since the count is since the daemon started.
    func engineCheck(_ s: JSONValue) -> Check? {
        let dropped = Int(s["counts"]?["engine_behind"]?.numberValue ?? 0)
        guard dropped > 0 else { return nil }
        return Check(
            name: "engine", verdict: .warn,
            detail: "\(dropped) sightings dropped since the daemon started: the engine fell behind what it was sent",
            fix: "look for engine.behind in the log; fewer assets or regions, a longer positioning.publish_interval "
                + "or a faster gateway; or whatever held the engine up (a sqlite3 shell with a transaction open on "
                + "the state file)")
    }
}

extension Doctor {
    /// A full filesystem stops the state store: region states, the event history and the
    /// webhooks' outbox are then not kept, and a dead webhook's backlog is what usually fills
    /// it. Warned about before it happens: under 100 MB or 5 % free.
    func storageCheck(_ file: String, status s: JSONValue) -> Check {
        let directory = file.lastIndex(of: "/").map { String(file[..<$0]) } ?? "."
        // Already failing: events wait in the daemon's memory (docs/service.md).
        let held = Int(s["counts"]?["events_held"]?.numberValue ?? 0)
        let dropped = Int(s["counts"]?["events_dropped"]?.numberValue ?? 0)
        if let failure = s["state_store_error"]?.stringValue {
            return Check(
                name: "state store", verdict: .fail,
                detail: "\(file) cannot be opened: \(failure); \(held) events held in memory, \(dropped) given up on",
                fix: "gateway.state_dir must be a directory beacond's user can write, on a mounted filesystem "
                    + "with room; the daemon opens it at its next write (within 5 s), no restart needed")
        }
        if held > 0 || dropped > 0 {
            let lastFailure = (s["last_errors"]?.items ?? []).map(\.cell).last { $0.contains("state.write_failed") }
            return Check(
                name: "state store", verdict: .fail,
                detail: "it cannot write: \(held) events held in memory, \(dropped) given up on"
                    + (lastFailure.map { "; \($0)" } ?? ""),
                fix: "free space in \(directory); held events are stored within 5 s of there being room, "
                    + "and lost if the daemon stops first")
        }
        var fs = statvfs()
        guard statvfs(directory.isEmpty ? "/" : directory, &fs) == 0 else {
            return Check(name: "state store", verdict: .skip, detail: "cannot read the free space of \(directory)")
        }
        let free = Double(fs.f_bavail) * Double(fs.f_frsize)
        let total = Double(fs.f_blocks) * Double(fs.f_frsize)
        let mb = { (bytes: Double) in Int(bytes / 1_000_000) }
        let detail = "\(mb(free)) MB free of \(mb(total)) MB where it is kept (\(directory))"
        let emptied = Int(s["counts"]?["state_emptied"]?.numberValue ?? 0)
        if emptied > 0 {
            return Check(
                name: "state store", verdict: .warn,
                detail: "found corrupt \(emptied) time(s) since the daemon started and emptied in place (the "
                    + "history went with it)"
                    + (setAsideFiles(in: directory).last.map { "; the damaged file was copied to \(directory)/\($0)" }
                        ?? "") + "; \(detail)",
                fix: "a storage card that corrupts files is failing: look for I/O errors (dmesg) and replace it")
        }
        if let aside = setAsideFiles(in: directory).last {
            return Check(
                name: "state store", verdict: .warn,
                detail: "a corrupt state file was set aside as \(directory)/\(aside); \(detail)",
                fix: "the daemon runs on a new one; the old file's history and undelivered events are in it "
                    + "(sqlite3 .recover), then delete it; a failing storage card is the usual cause")
        }
        guard free < 100_000_000 || free < total * 0.05 else {
            return Check(name: "state store", verdict: .ok, detail: detail)
        }
        return Check(
            name: "state store", verdict: .warn, detail: detail,
            fix: "free space there; a webhook that is down keeps its events until max_age (beaconctl outbox)")
    }
}

extension Doctor {
    /// State files the daemon found corrupt at start and renamed (`StateStore.open`), oldest
    /// first; none when the directory cannot be read.
    func setAsideFiles(in directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix("beacond.sqlite.corrupt-") && !name.hasSuffix("-wal") && !name.hasSuffix("-shm") {
                names.append(name)
            }
        }
        return names.sorted()
    }

    /// bluetoothd, its D-Bus policy, the adapters and discovery, as the daemon sees them.
    func bluetoothChecks(_ s: JSONValue) -> [Check] {
        var checks: [Check] = []
        let errors = (s["last_errors"]?.items ?? []).map(\.cell)
        let reachable = s["bluez"]?["reachable"]?.boolValue == true
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
        } else {
            checks.append(Check(name: "dbus permission", verdict: .ok, detail: "no access errors"))
        }
        let adapters = s["adapters"]?.items ?? []
        let present = adapters.filter { $0["present"]?.boolValue == true }
        let unpowered = present.filter { $0["powered"]?.boolValue != true }.compactMap { $0["adapter"]?.stringValue }
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
                    detail: present.compactMap { $0["adapter"]?.stringValue }.joined(separator: ", ") + " powered"))
        }
        let discovering = present.filter { $0["discovering"]?.boolValue == true }
        checks.append(
            discovering.isEmpty
                ? Check(
                    name: "discovery", verdict: present.isEmpty ? .skip : .fail, detail: "no adapter is discovering",
                    fix: "beacond restarts discovery itself; if this persists, see journalctl -u beacond")
                : Check(name: "discovery", verdict: .ok, detail: "\(discovering.count) adapter(s) scanning"))
        return checks
    }
}
