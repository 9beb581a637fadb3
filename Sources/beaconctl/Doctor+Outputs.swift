import APIModel
import BeaconCore
import POSIX

#if canImport(Glibc)
    import Glibc
#endif

/// The doctor's checks of what the daemon keeps and sends: the state store, the engine's
/// backlog and each webhook, from `/v1/status`.
extension Doctor {
    /// A webhook: disabled (410), failing, events it never delivered, and whether its host
    /// takes a connection from this gateway at all (`Reachability`), which a webhook that has
    /// had nothing to send yet shows no other way.
    ///
    /// The connection is the daemon's own when it answers `/v1/reachability` (`seen`): from
    /// its sandbox, not from this shell.
    func webhookCheck(_ hook: StatusReport.Webhook, seen: DaemonReachability?) -> Check {
        let name = "webhook \(hook.id)"
        let url = hook.url
        if hook.state == .disabled {
            return Check(
                name: name, verdict: .fail,
                detail: "disabled: \(hook.disabled ?? "-"); \(Outbox.dead(hook)) dead letters",
                fix: "fix the receiver, then change the webhook's url and reload")
        }
        let endpoint = Reachability.endpoint(of: url)
        let delivering = hook.state != .retrying && hook.delivered > 0
        if let endpoint, let failure = connectionFailure(kind: "webhook", id: hook.id, endpoint, seen: seen) {
            if failure.sandboxed {
                return Check(
                    name: name, verdict: .fail,
                    detail: "cannot connect to \(failure.detail); \(hook.pending) waiting",
                    fix: Self.sandboxFix(host: endpoint.host))
            }
            let failure = failure.detail
            // It has delivered: through a proxy (libcurl takes https_proxy from the daemon's
            // environment, which this check does not use), or the receiver went down since.
            guard !delivering else {
                return Check(
                    name: name, verdict: .warn,
                    detail: "\(hook.delivered) delivered, but cannot connect now to \(failure)",
                    fix: "through a proxy this is expected; else the receiver went down, and the next event will "
                        + "wait in the outbox until it is back")
            }
            return Check(
                name: name, verdict: .fail,
                detail: "cannot connect to \(failure); \(hook.pending) waiting",
                fix: "check \(url), the gateway's DNS and firewall (or, behind a proxy, https_proxy in beacond's "
                    + "environment); events wait in the outbox up to max_age")
        }
        let reachable = endpoint.map { " (\($0.host):\($0.port) takes connections)" } ?? ""
        if hook.state == .retrying {
            return Check(
                name: name, verdict: .warn,
                detail: "failing: \(hook.lastError ?? "-"); \(hook.pending) waiting"
                    + reachable,
                fix: "\(url) takes connections, so the fault is in the exchange: a TLS certificate, the path, "
                    + "or the receiver answering errors (its logs); beaconctl test-webhook \(hook.id) "
                    + "tries it now")
        }
        if hook.deadLetters > 0 {
            return Check(
                name: name, verdict: .warn,
                detail: "\(hook.delivered) delivered; \(Outbox.dead(hook)) never delivered" + reachable,
                fix: "beaconctl outbox lists them; a longer max_age keeps events through a longer outage")
        }
        return Check(name: name, verdict: .ok, detail: "\(hook.delivered) delivered" + reachable)
    }

    /// Why `endpoint` takes no connection, from the daemon's process when it said (with
    /// whether only its sandbox stops it), else from this one; nil when it takes one.
    func connectionFailure(
        kind: String, id: String, _ endpoint: (host: String, port: String), seen: DaemonReachability?
    ) -> (detail: String, sandboxed: Bool)? {
        if let seen, let verdict = seen.failure(kind, id) {
            return verdict.map { seen.explain($0, host: endpoint.host, port: endpoint.port) }
        }
        return Reachability.failure(host: endpoint.host, port: endpoint.port).map { ($0, false) }
    }

    /// The fix when the daemon's unit, not the network, stops a connection.
    static func sandboxFix(host: String) -> String {
        "the unit's IPAddressDeny= stops it (systemctl show beacond -p IPAddressDeny): allow \(host) in a drop-in, "
            + "`systemctl edit beacond` with [Service] IPAddressAllow=\(host), then systemctl restart beacond"
    }
}

extension Doctor {
    /// An engine that has not turned for this long is stuck: it turns at least once a second.
    static let stuckEngineAfter = 10.0

    /// A stuck engine (no sightings handled, no timers, no alerts) fails; sightings dropped
    /// because the engine had 50,000 waiting warn: it could not keep up with what the radios
    /// and relays hear. Said only when it happened; the count is since the daemon started.
    func engineCheck(_ s: StatusReport) -> Check? {
        let dropped = s.counts.engineBehind
        let droppedText = "\(dropped) sightings dropped since the daemon started"
        if let age = s.engineLastTurnAgeSeconds, age >= Self.stuckEngineAfter {
            return Check(
                name: "engine", verdict: .fail,
                detail: "has not run for \(Int(age)) s: no sightings, timers or alerts are handled; \(droppedText)",
                fix: "systemctl restart beacond (under systemd its watchdog does this), and report the log around "
                    + "the time it stopped")
        }
        guard dropped > 0 else { return nil }
        return Check(
            name: "engine", verdict: .warn,
            detail: "\(droppedText): the engine fell behind what it was sent",
            fix: "look for engine.behind in the log; fewer assets or regions, a longer positioning.publish_interval "
                + "or a faster gateway")
    }
}

extension Doctor {
    /// A full filesystem stops the state store: region states, the event history and the
    /// webhooks' outbox are then not kept, and a dead webhook's backlog is what usually fills
    /// it. Warned about before it happens: under 100 MB or 5 % free.
    func storageCheck(_ file: String, status s: StatusReport) -> Check {
        let directory = file.lastIndex(of: "/").map { String(file[..<$0]) } ?? "."
        // Already failing: events wait in the daemon's memory (docs/service.md).
        let held = s.counts.eventsHeld
        let dropped = s.counts.eventsDropped
        if let failure = s.stateStoreError {
            return Check(
                name: "state store", verdict: .fail,
                detail: "\(file) cannot be opened: \(failure); \(held) events held in memory, \(dropped) given up on",
                fix: "gateway.state_dir must be a directory beacond's user can write, on a mounted filesystem "
                    + "with room; the daemon opens it at its next write (within 5 s), no restart needed")
        }
        if held > 0 || dropped > 0 {
            let lastFailure = s.lastErrors.last { $0.contains("state.write_failed") }
            return Check(
                name: "state store", verdict: .fail,
                detail: "it cannot write: \(held) events held in memory, \(dropped) given up on"
                    + (lastFailure.map { "; \($0)" } ?? ""),
                fix: "free space in \(directory); held events are stored within 5 s of there being room. Until "
                    + "then they survive a restart (the runtime directory), and alerts a reboot too ("
                    + "\(Self.reserveFile), \(s.stateReserve?.alertsKept ?? 0) kept)")
        }
        var fs = statvfs()
        guard statvfs(directory.isEmpty ? "/" : directory, &fs) == 0 else {
            return Check(name: "state store", verdict: .skip, detail: "cannot read the free space of \(directory)")
        }
        let free = Double(fs.f_bavail) * Double(fs.f_frsize)
        let total = Double(fs.f_blocks) * Double(fs.f_frsize)
        let mb = { (bytes: Double) in Int(bytes / 1_000_000) }
        let detail = "\(mb(free)) MB free of \(mb(total)) MB where it is kept (\(directory))"
        let emptied = s.counts.stateEmptied
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
    /// The state file's write-ahead log past this is held by another process's read: the
    /// daemon keeps it under 6 MB (`SQLiteDatabase.walSizeLimit`) otherwise.
    static let pinnedLogBytes = 24 << 20

    /// A reader left open on the state file (a `sqlite3` shell in a forgotten terminal, a
    /// backup that hangs) stops the log from being copied back: it grows with every write the
    /// daemon makes, towards a full card, and nothing else says so. Shown only when it does.
    func pinnedLogCheck(_ file: String, status s: StatusReport) -> Check? {
        guard let bytes = s.stateStoreWALBytes, bytes > Self.pinnedLogBytes else { return nil }
        return Check(
            name: "state store log", verdict: .warn,
            detail: "\(file)-wal is \(Int(bytes / 1_000_000)) MB and grows with every write: another process holds "
                + "a read transaction open on \(file), so the log cannot be copied back into it",
            fix: "end that process (`fuser -v \(file)` lists those that have it open besides beacond: a sqlite3 "
                + "shell, a backup tool); the log shrinks "
                + "back to 6 MB at the daemon's next writes")
    }
}

extension Doctor {
    /// `DiskReserve.fileName` (beaconctl does not link the state store).
    static let reserveFile = "beacond.reserve"

    /// Without the state directory's reserve (`DiskReserve`, made at start when there is room)
    /// a full disk keeps the alerts it holds through a restart but not through a reboot or a
    /// power cut. Shown only when it is missing.
    func reserveCheck(_ file: String, status s: StatusReport) -> Check? {
        guard s.stateStoreError == nil, s.stateReserve == nil else { return nil }
        let directory = file.lastIndex(of: "/").map { String(file[..<$0]) } ?? "."
        return Check(
            name: "state reserve", verdict: .warn,
            detail: "\(directory)/\(Self.reserveFile) could not be made at start (see the daemon's log, "
                + "state.reserve_unavailable): if the disk fills, alerts made meanwhile are lost at a reboot",
            fix: "free 4 MB in \(directory) and restart beacond; the reserve is made at "
                + "start")
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
}
