import APIModel
import BeaconConfig
import BeaconCore
import BeaconRuntime
import HTTPServer
import POSIX
import Publishing
import Storage

/// `GET /v1/status`: the gateway, its inputs, counts, outbox, state store and site.
extension APIRouter {
    func status() -> HTTPReply {
        let now = context.clock()
        // A stuck engine is when this must answer most: then from its last turn.
        let glance = currentGlance()
        let (counters, beacons, clients, unplaced) = (
            glance.counters, glance.beacons, glance.clients, glance.unplacedReceivers
        )
        let runtime = context.runtime()
        let depths = (try? context.store?.outboxDepths()) ?? []
        let held = context.publisher.held
        let uptime = now - context.started
        var report = StatusReport()
        report.gateway = context.config.gateway.id
        report.version = context.version
        report.started = RFC3339.format(context.started)
        report.uptimeSeconds = uptime.seconds
        report.configFile = runtime.configFile
        report.configDigest = runtime.configDigest
        report.configLoadedAt = runtime.configLoadedAt.map(RFC3339.format)
        report.configNeedsRestart = runtime.configNeedsRestart
        report.simulated = runtime.simulated
        report.bluezReachable = runtime.bluezReachable
        report.dbusSignals = runtime.dbusSignals
        report.advertising = runtime.advertising
        report.adapters = runtime.adapters
        report.engineLastTurn = glance.lastTurn.map(RFC3339.format)
        report.engineLastTurnAgeSeconds = (context.engine.timeSinceLastTurn(now: now) ?? now - context.started).seconds
        report.sightingsPerSecond = uptime.seconds > 0 ? Double(counters.sightings) / uptime.seconds : 0
        report.counts.sightings = counters.sightings
        report.counts.decoded = counters.decode.decoded
        report.counts.assetTags = counters.assetTagSightings
        report.counts.late = counters.lateSightings
        report.counts.stale = counters.staleSightings
        report.counts.clockAhead = counters.clockAheadSightings
        report.counts.engineBehind = context.engine.shedCount
        (report.counts.beacons, report.counts.clients) = (beacons, clients)
        report.counts.events = context.publisher.countsByType.values.reduce(0, +)
        (report.counts.eventsHeld, report.counts.eventsDropped) = (held.events, held.dropped)
        report.counts.stateEmptied = context.store?.timesEmptied ?? 0
        report.counts.streamClients = stream.count
        report.counts.zonesFlapping = glance.flapping
        report.outbox.pending = depths.reduce(0) { $0 + $1.pending }
        report.outbox.deadLetters = depths.reduce(0) { $0 + $1.deadLetters }
        report.outbox.deadLettersDiscarded = depths.reduce(0) { $0 + $1.deadLettersDiscarded }
        report.outbox.oldest = depths.compactMap(\.oldest).min().map(RFC3339.format)
        report.webhooks = context.webhooks.map { Self.webhook($0, depths: depths) }
        report.stateStore = context.store?.path
        report.stateStoreError = context.store?.openFailure
        report.stateStoreWALBytes = context.store?.walBytes
        report.stateWrittenBytes = ProcessIO.writtenBytes()
        report.stateReserve = runtime.stateReserve.map {
            StatusReport.Reserve(file: $0.file, bytes: $0.bytes, alertsKept: $0.alerts)
        }
        report.lastErrors = context.errors.all
        report.unplacedReceivers = unplaced.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        report.site = runtime.site
        report.esphome = runtime.esphome
        return Reply.json(report.json)
    }
}
