import APIModel
import ArgumentParser
import BeaconCore
import BeaconRuntime
import POSIX

#if canImport(Glibc)
    import Glibc
#endif

struct Status: ParsableCommand {
    /// `12.3 MB`, `4.4 GB`: bytes as an operator reads a card's size.
    static func megabytes(_ bytes: Double) -> String {
        bytes >= 1e9 ? "\((bytes / 1e8).rounded() / 10) GB" : "\((bytes / 1e5).rounded() / 10) MB"
    }
    static let configuration = CommandConfiguration(
        abstract: "Gateway, adapters, rates, outbox backlog and last errors.")
    @OptionGroup var common: Common

    func run() throws {
        try common.show("/v1/status") { json in
            let s = StatusReport(json: json)
            let c = s.counts
            var lines = [
                "gateway   \(s.gateway)  (beacond \(s.version), up \(JSONValue.round(s.uptimeSeconds, places: 10).cell) s)",
                "config    \(s.configFile ?? "-")",
                s.simulated
                    ? "input     a simulated site (--simulate); BlueZ not used"
                    : "bluez     \(s.bluezReachable ? "reachable" : "NOT reachable")",
                "sightings \(c.sightings) (\(JSONValue.round(s.sightingsPerSecond).cell)/s), beacons \(c.beacons), "
                    + "asset tags \(c.assetTags), events \(c.events)",
                "outbox    \(s.outbox.pending) pending, \(s.outbox.deadLetters) dead letters",
            ]
            // Only when there is something to say: relays out of time, receivers with no position
            if c.stale > 0 || c.clockAhead > 0 {
                lines.append(
                    "relays    \(c.stale) sightings too old to use, \(c.clockAhead) stamped ahead of this clock")
            }
            if let age = s.engineLastTurnAgeSeconds, age >= Doctor.stuckEngineAfter {
                lines.append(
                    "engine    has not run for \(Int(age)) s: counts are as of then (beaconctl doctor)")
            }
            if let failure = s.stateStoreError {
                lines.append(
                    "state     \(c.eventsHeld) events held in memory: the state store cannot be opened: \(OutsideText.line(failure)) "
                        + "(beaconctl doctor)")
            } else if c.eventsHeld > 0 {
                lines.append(
                    "state     \(c.eventsHeld) events held in memory: the state store cannot write (beaconctl doctor)")
            }
            if let written = s.stateWrittenBytes, s.uptimeSeconds > 0 {
                let perDay = Double(written) / s.uptimeSeconds * 86_400
                lines.append(
                    "disk      \(Self.megabytes(Double(written))) written since the start, "
                        + "\(Self.megabytes(perDay)) a day at this rate (docs/service.md: how long a card lasts)")
            }
            if c.stateEmptied > 0 {
                lines.append(
                    "state     found corrupt \(c.stateEmptied) time(s) and emptied in place: the storage may be failing "
                        + "(beaconctl doctor)")
            }
            if !s.unplacedReceivers.isEmpty {
                lines.append(
                    "receivers with no position (not used for assets): "
                        + s.unplacedReceivers.map { "\($0.0) (\($0.1))" }.joined(separator: ", "))
            }
            var adapters = Table("ADAPTER", "PRESENT", "POWERED", "DISCOVERING")
            for a in s.adapters {
                adapters.add(a.adapter, yes(a.present), yes(a.powered), yes(a.discovering))
            }
            lines.append("")
            lines.append(adapters.text)
            if !s.esphome.isEmpty {
                var proxies = Table("ESPHOME PROXY", "HOST", "CONNECTED", "MODEL", "ADV/S", "LAST ERROR")
                for p in s.esphome {
                    proxies.add(
                        p.receiver, p.host, p.connected ? "since \(p.since ?? "?")" : "NO",
                        [p.name, p.model, p.esphomeVersion.map { "ESPHome \($0)" }].compactMap { $0 }.joined(
                            separator: ", "),
                        "\((p.advertisementsPerSecond * 10).rounded() / 10)", p.lastError ?? "")
                }
                lines.append("")
                lines.append(proxies.text)
            }
            if let site = s.site { lines += siteLines(site) }
            if !s.lastErrors.isEmpty {
                lines.append("")
                lines.append("last errors:")
                lines += s.lastErrors.map { "  " + OutsideText.line($0, limit: 400) }
            }
            return lines.joined(separator: "\n")
        }
    }
}

/// The site's part of `beaconctl status`: the broker, and each gateway as this one sees it.
func siteLines(_ site: StatusReport.Site) -> [String] {
    let broker =
        site.connected
        ? "connected, \(site.reconnects) reconnects"
        : "NOT connected: \(OutsideText.line(site.lastError ?? "connecting")) (beaconctl doctor)"
    var lines = [
        "",
        "site      \(site.id) on \(site.broker): \(broker)",
        "batches   \(site.batchesSent) sent, \(site.batchesReceived) received (\(site.sightingsReceived) sightings), "
            + "\(site.batchesLost) lost, \(site.sightingsUnsent) own sightings unsent",
    ]
    if let l = site.locator {
        lines.append(
            "locator   \(l.gateway) (epoch \(l.epoch), since \(l.since))\(l.thisGateway ? ": this gateway" : "")")
    } else {
        lines.append("locator   none announced yet")
    }
    if !site.dropped.isEmpty {
        lines.append("dropped   " + site.dropped.map { "\($0.1) \($0.0)" }.joined(separator: ", "))
    }
    for topic in site.silentTopics {
        lines.append("SILENT    nothing on \(topic) since connecting: the nodes, or the broker's ACL (docs/sites.md)")
    }
    var gateways = Table("GATEWAY", "ONLINE", "LAST_BATCH", "BATCHES", "LOST", "CLOCK_OFFSET_S")
    for g in site.gateways {
        gateways.add(
            g.id, g.online.map(yes) ?? "-", g.lastBatch ?? "-", "\(g.batches)", "\(g.lost)",
            g.clockOffsetSeconds.map { JSONValue.round($0, places: 1000).cell } ?? "-")
    }
    lines.append("")
    lines.append(gateways.text)
    if !site.foreignReceivers.isEmpty {
        var foreign = Table("RECEIVER", "SYSTEM", "NAME", "SIGHTINGS", "LAST_HEARD")
        for r in site.foreignReceivers {
            foreign.add(r.receiver, r.system, r.name, "\(r.sightings)", r.lastHeard ?? "never")
        }
        lines.append("")
        lines.append(foreign.text)
    }
    return lines
}
