import APIModel
import BeaconConfig
import BeaconCore
import BeaconRuntime
import HTTPServer
import POSIX
import Publishing
import Storage
import Synchronization

/// `GET /metrics` in the Prometheus text format (version 0.0.4). Names follow Prometheus'
/// conventions: `_total` for counters, base units (seconds), labels for reasons and types.
extension APIRouter {
    func metrics() -> HTTPReply {
        let glance = currentGlance()
        let (counters, beacons) = (glance.counters, glance.beacons)
        let runtime = context.runtime()
        let depths = (try? context.store?.outboxDepths()) ?? []
        let now = context.clock()
        var m = MetricsText()
        m.counter(.advertisementsReceivedTotal, counters.sightings)
        m.counter(
            .advertisementsDecodedTotal, counters.decode.decoded
        )
        m.family(.advertisementsDroppedTotal)
        for reason in NonMatch.allCases {
            m.sample(
                .advertisementsDroppedTotal, ["reason": reason.description], Double(counters.decode[reason]))
        }
        m.sample(
            .advertisementsDroppedTotal, ["reason": "no_identity"], Double(counters.framesWithoutIdentity))
        m.sample(
            .advertisementsDroppedTotal, ["reason": "engine_behind"],
            Double(context.engine.shedCount))
        m.sample(
            .advertisementsDroppedTotal, ["reason": "too_many_receivers"],
            Double(counters.receiversRefused))
        m.counter(
            .advertisementsAssetTagsTotal,
            counters.assetTagSightings)
        m.counter(
            .advertisementsLateTotal, counters.lateSightings)
        m.counter(
            .advertisementsStaleTotal,
            counters.staleSightings)
        m.counter(
            .advertisementsClockAheadTotal,
            counters.clockAheadSightings)
        m.gauge(.beacons, Double(beacons))
        m.counter(
            .beaconsEvictedTotal,
            counters.beaconsEvicted)
        let held = context.publisher.held
        m.gauge(
            .eventsHeld, Double(held.events))
        m.counter(
            .eventsDroppedTotal, held.dropped)
        m.counter(
            .stateStoreEmptiedTotal,
            context.store?.timesEmptied ?? 0)
        if let store = context.store {
            m.gauge(
                .stateWalBytes,
                Double(store.walBytes))
        }
        if let written = ProcessIO.writtenBytes() { m.counter(.stateWrittenBytesTotal, written) }
        m.family(.eventsTotal)
        for (type, count) in context.publisher.countsByType.sorted(by: { $0.key < $1.key }) {
            m.sample(.eventsTotal, ["type": type], Double(count))
        }
        // Each family's samples together, after its HELP and TYPE, as the text format asks.
        let hooks = context.webhooks.map { worker in
            (id: worker.settings.id, depth: depths.first { $0.webhook == worker.settings.id }, c: worker.counters)
        }
        m.family(.outboxDepth)
        for h in hooks { m.sample(.outboxDepth, ["webhook": h.id], Double(h.depth?.pending ?? 0)) }
        m.family(.outboxOldestAgeSeconds)
        for h in hooks {
            let age = h.depth?.oldest.map { (now - $0).seconds } ?? 0
            m.sample(.outboxOldestAgeSeconds, ["webhook": h.id], age)
        }
        m.family(.deadLetters)
        for h in hooks { m.sample(.deadLetters, ["webhook": h.id], Double(h.depth?.deadLetters ?? 0)) }
        m.family(
            .deadLettersDiscardedTotal)
        for h in hooks {
            let discarded = Double(h.depth?.deadLettersDiscarded ?? 0)
            m.sample(.deadLettersDiscardedTotal, ["webhook": h.id], discarded)
        }
        m.family(.webhookRequestsTotal)
        for h in hooks {
            m.sample(.webhookRequestsTotal, ["webhook": h.id, "result": "ok"], Double(h.c.requestsOK))
            m.sample(
                .webhookRequestsTotal, ["webhook": h.id, "result": "failed"], Double(h.c.requestsFailed))
        }
        m.family(.webhookEventsDeliveredTotal)
        for h in hooks { m.sample(.webhookEventsDeliveredTotal, ["webhook": h.id], Double(h.c.delivered)) }
        m.family(.webhookPositionsConflatedTotal)
        for h in hooks {
            m.sample(.webhookPositionsConflatedTotal, ["webhook": h.id], Double(h.c.positionsConflated))
        }
        m.gauge(
            .bluezReachable, runtime.bluezReachable ? 1 : 0)
        m.counter(.dbusSignalsTotal, runtime.dbusSignals)
        m.counter(
            .dbusReconnectsTotal, runtime.dbusReconnects)
        m.family(.adapterUp)
        for a in runtime.adapters {
            m.sample(.adapterUp, ["adapter": a.adapter], a.hearing ? 1 : 0)
        }
        for family in [
            Metric.esphomeProxyUp, .esphomeAdvertisementsTotal, .esphomeAdvertisementsRefusedTotal,
            .esphomeAdvertisementsShedTotal,
        ] {
            m.family(family)
            for p in runtime.esphome {
                let value: Int
                switch family {
                case .esphomeProxyUp: value = p.connected ? 1 : 0
                case .esphomeAdvertisementsTotal: value = p.advertisements
                case .esphomeAdvertisementsShedTotal: value = p.shed
                default: value = p.refused
                }
                m.sample(family, ["proxy": p.receiver], Double(value))
            }
        }
        let timing = context.engine.timing
        m.counter(.engineTurnsTotal, timing.turns)
        m.family(.engineBusySecondsTotal)
        m.sample(.engineBusySecondsTotal, [:], timing.busy.seconds)
        m.gauge(.engineLastTurnSeconds, timing.lastTurn.seconds)
        m.gauge(
            .engineLastTurnTimestampSeconds,
            (glance.lastTurn ?? context.started).unixSeconds)
        m.gauge(.streamClients, Double(stream.count))
        if let server = transport.withLock({ $0 }) {
            m.gauge(
                .apiConnections, Double(server.openConnections.load(ordering: .relaxed)))
            m.gauge(
                .apiBufferedRequestBytes,
                Double(server.bufferedRequestBytes.load(ordering: .relaxed)))
            m.family(
                .apiRefusedTotal)
            for (reason, count) in server.refusalCounts.sorted(by: { $0.key < $1.key }) {
                m.sample(.apiRefusedTotal, ["reason": reason], Double(count))
            }
            m.counter(
                .streamClientsDroppedTotal, server.streamsDropped.load(ordering: .relaxed))
        }
        if let listener = context.listener.withLock({ $0 }) {
            m.gauge(.httpConnections, Double(listener.openConnections.load(ordering: .relaxed)))
            m.family(.httpRefusedTotal)
            for (reason, count) in listener.refusalCounts.sorted(by: { $0.key < $1.key }) {
                m.sample(.httpRefusedTotal, ["reason": reason], Double(count))
            }
        }
        m.gauge(.uptimeSeconds, (now - context.started).seconds)
        m.family(.buildInfo)
        m.sample(.buildInfo, ["version": context.version, "arch": Self.architecture], 1)
        m.family(.configReloadsTotal)
        m.sample(.configReloadsTotal, ["result": "applied"], Double(runtime.reloadsApplied))
        m.sample(.configReloadsTotal, ["result": "refused"], Double(runtime.reloadsRefused))
        m.receivers(
            glance.receivers, configured: context.config.receivers.map(\.id), now: now, started: context.started)
        if !context.config.assets.isEmpty, let tags = tagList(at: now) { m.tags(tags) }
        if !context.config.zones.isEmpty {
            let (occupancy, flaps) =
                onEngine { engine, _ in ((engine.tracker?.occupancy ?? [:], engine.tracker?.flappingBegun ?? 0), []) }
                ?? ([:], 0)
            m.zones(context.config.zones.map(\.id), occupancy: occupancy, visits: context.engine.zoneVisits)
            m.counter(.zoneFlappingTotal, flaps)
        }
        if let site = runtime.site { m.site(site) }
        return .response(
            HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: m.text))
    }
}

extension APIRouter {
    static let architecture: String = {
        #if arch(x86_64)
            "x86_64"
        #elseif arch(arm64)
            "aarch64"
        #elseif arch(arm)
            "arm"
        #else
            "other"
        #endif
    }()
}

extension MetricsText {
    /// Each receiver's sightings and the age of its last one: the configured receivers always
    /// (a silent one is what an alert looks for), and every other one heard.
    mutating func receivers(
        _ tallies: [String: ReceiverTally], configured: [String], now: Timestamp, started: Timestamp
    ) {
        let names = Set(configured).union(tallies.keys).sorted()
        family(.receiverSightingsTotal)
        for name in names {
            sample(.receiverSightingsTotal, ["receiver": name], Double(tallies[name]?.sightings ?? 0))
        }
        family(.receiverLastHeardAgeSeconds)
        for name in names {
            let age = max(0, (now - (tallies[name]?.lastHeard ?? started)).seconds)
            sample(.receiverLastHeardAgeSeconds, ["receiver": name], (age * 1000).rounded() / 1000)
        }
    }

    /// The tags' families (SPEC §7.5): how many are missing and low, each one's battery.
    mutating func tags(_ tags: [TagList.Tag]) {
        gauge(.assetsMissing, Double(tags.filter(\.missing).count))
        gauge(.assetsBatteryLow, Double(tags.filter(\.batteryLow).count))
        family(.assetBatteryPercent)
        for tag in tags {
            if let p = tag.battery?.percent { sample(.assetBatteryPercent, ["asset": tag.asset], Double(p)) }
        }
        family(.assetBatteryVolts)
        for tag in tags {
            if let mv = tag.battery?.millivolts { sample(.assetBatteryVolts, ["asset": tag.asset], Double(mv) / 1000) }
        }
    }

    /// The zones' families (SPEC §8): every configured zone, an empty one as 0.
    mutating func zones(_ ids: [String], occupancy: [String: Int], visits: [String: Int]) {
        family(.zoneOccupancy)
        for id in ids { sample(.zoneOccupancy, ["zone": id], Double(occupancy[id] ?? 0)) }
        family(.zoneVisitsTotal)
        for id in ids { sample(.zoneVisitsTotal, ["zone": id], Double(visits[id] ?? 0)) }
    }

    /// The site's families (SPEC §6.3): the broker connection, batches out and in.
    mutating func site(_ site: StatusReport.Site) {
        gauge(.mqttConnected, site.connected ? 1 : 0)
        gauge(.siteLocator, site.locator?.thisGateway == true ? 1 : 0)
        counter(.mqttReconnectsTotal, site.reconnects)
        family(.mqttPublishRefusedTotal)
        for (reason, n) in site.publishRefused { sample(.mqttPublishRefusedTotal, ["reason": reason], Double(n)) }
        gauge(.siteSilentTopics, Double(site.silentTopics.count))
        gauge(.siteQueuedSightings, Double(site.queued))
        counter(.siteBatchesSentTotal, site.batchesSent)
        counter(.siteSightingsUnsentTotal, site.sightingsUnsent)
        family(.siteBatchesReceivedTotal)
        for g in site.gateways { sample(.siteBatchesReceivedTotal, ["gateway": g.id], Double(g.batches)) }
        family(.siteBatchesLostTotal)
        for g in site.gateways { sample(.siteBatchesLostTotal, ["gateway": g.id], Double(g.lost)) }
        family(.siteDroppedTotal)
        for (reason, n) in site.dropped { sample(.siteDroppedTotal, ["reason": reason], Double(n)) }
        family(.siteForeignSightingsTotal)
        for r in site.foreignReceivers {
            sample(
                .siteForeignSightingsTotal, ["receiver": r.receiver, "system": r.system, "name": r.name],
                Double(r.sightings))
        }
    }
}

/// Accumulates the exposition text, one `# HELP`/`# TYPE` per family.
struct MetricsText {
    private(set) var text = ""

    mutating func family(_ metric: Metric) {
        text += "# HELP \(metric.rawValue) \(metric.help)\n# TYPE \(metric.rawValue) \(metric.type)\n"
    }

    mutating func sample(_ metric: Metric, _ labels: [String: String], _ value: Double) {
        let labelText =
            labels.isEmpty
            ? ""
            : "{"
                + labels.sorted { $0.key < $1.key }.map { "\($0.key)=\"\(Self.escape($0.value))\"" }.joined(
                    separator: ",") + "}"
        let valueText = value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        text += "\(metric.rawValue)\(labelText) \(valueText)\n"
    }

    mutating func counter(_ metric: Metric, _ value: Int) {
        family(metric)
        sample(metric, [:], Double(value))
    }

    mutating func gauge(_ metric: Metric, _ value: Double) {
        family(metric)
        sample(metric, [:], value)
    }

    static func escape(_ s: String) -> String {
        s.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"").replacingAll("\n", with: "\\n")
    }
}

extension String {
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}
