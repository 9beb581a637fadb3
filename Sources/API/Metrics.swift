import BeaconConfig
import BeaconCore
import BeaconRuntime
import HTTPServer
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
        m.counter("beacond_advertisements_received_total", "Advertisements handed to the engine.", counters.sightings)
        m.counter(
            "beacond_advertisements_decoded_total", "Advertisements decoded as a beacon frame.", counters.decode.decoded
        )
        m.family("beacond_advertisements_dropped_total", "counter", "Advertisements that are not beacons, by reason.")
        for reason in NonMatch.allCases {
            m.sample(
                "beacond_advertisements_dropped_total", ["reason": reason.description], Double(counters.decode[reason]))
        }
        m.sample(
            "beacond_advertisements_dropped_total", ["reason": "no_identity"], Double(counters.framesWithoutIdentity))
        m.sample(
            "beacond_advertisements_dropped_total", ["reason": "engine_behind"],
            Double(context.engine.shedCount))
        m.sample(
            "beacond_advertisements_dropped_total", ["reason": "too_many_receivers"],
            Double(counters.receiversRefused))
        m.counter(
            "beacond_advertisements_asset_tags_total",
            "Advertisements of assets' address tags that are no beacon frame, used for positions.",
            counters.assetTagSightings)
        m.counter(
            "beacond_advertisements_late_total", "Sightings older than the engine's clock.", counters.lateSightings)
        m.counter(
            "beacond_advertisements_stale_total",
            "Sightings older than exit_timeout when they arrived (a relay's backlog or clock behind): dropped.",
            counters.staleSightings)
        m.counter(
            "beacond_advertisements_clock_ahead_total",
            "Sightings stamped over a second later than this gateway's clock (a relay's clock runs fast), taken at its time.",
            counters.clockAheadSightings)
        m.gauge("beacond_beacons", "Beacons currently remembered.", Double(beacons))
        m.counter(
            "beacond_beacons_evicted_total",
            "Beacons forgotten early because \(BeaconEngine.defaultBeaconLimit) were remembered (a flood of made-up identities?).",
            counters.beaconsEvicted)
        let held = context.publisher.held
        m.gauge(
            "beacond_events_held", "Events held in memory because the state store cannot write (a full disk).",
            Double(held.events))
        m.counter(
            "beacond_events_dropped_total", "Events given up on while the state store could not write them.",
            held.dropped)
        m.counter(
            "beacond_state_store_emptied_total",
            "Times the state file was found corrupt while running and emptied in place (a failing storage card?).",
            context.store?.timesEmptied ?? 0)
        if let store = context.store {
            m.gauge(
                "beacond_state_wal_bytes",
                "Size of the state file's write-ahead log; it grows past 6 MB only while another process holds a read open on the file.",
                Double(store.walBytes))
        }
        m.family("beacond_events_total", "counter", "Events published, by type.")
        for (type, count) in context.publisher.countsByType.sorted(by: { $0.key < $1.key }) {
            m.sample("beacond_events_total", ["type": type], Double(count))
        }
        // Each family's samples together, after its HELP and TYPE, as the text format asks.
        let hooks = context.webhooks.map { worker in
            (id: worker.settings.id, depth: depths.first { $0.webhook == worker.settings.id }, c: worker.counters)
        }
        m.family("beacond_outbox_depth", "gauge", "Events waiting for a webhook.")
        for h in hooks { m.sample("beacond_outbox_depth", ["webhook": h.id], Double(h.depth?.pending ?? 0)) }
        m.family("beacond_outbox_oldest_age_seconds", "gauge", "Age of the oldest event waiting for a webhook.")
        for h in hooks {
            let age = h.depth?.oldest.map { (now - $0).seconds } ?? 0
            m.sample("beacond_outbox_oldest_age_seconds", ["webhook": h.id], age)
        }
        m.family("beacond_dead_letters", "gauge", "Events given up on and kept, by webhook.")
        for h in hooks { m.sample("beacond_dead_letters", ["webhook": h.id], Double(h.depth?.deadLetters ?? 0)) }
        m.family(
            "beacond_dead_letters_discarded_total", "counter",
            "Dead letters discarded, oldest first, past the newest \(context.store?.deadLetterLimit ?? 0) per webhook.")
        for h in hooks {
            let discarded = Double(h.depth?.deadLettersDiscarded ?? 0)
            m.sample("beacond_dead_letters_discarded_total", ["webhook": h.id], discarded)
        }
        m.family("beacond_webhook_requests_total", "counter", "Webhook requests by result.")
        for h in hooks {
            m.sample("beacond_webhook_requests_total", ["webhook": h.id, "result": "ok"], Double(h.c.requestsOK))
            m.sample(
                "beacond_webhook_requests_total", ["webhook": h.id, "result": "failed"], Double(h.c.requestsFailed))
        }
        m.family("beacond_webhook_events_delivered_total", "counter", "Events acknowledged by a webhook.")
        for h in hooks { m.sample("beacond_webhook_events_delivered_total", ["webhook": h.id], Double(h.c.delivered)) }
        m.gauge(
            "beacond_bluez_reachable", "1 when bluetoothd owns org.bluez on the system bus.",
            runtime.bluezReachable ? 1 : 0)
        m.counter("beacond_dbus_signals_total", "D-Bus signals handled.", runtime.dbusSignals)
        m.counter(
            "beacond_dbus_reconnects_total", "Times the D-Bus connection was re-established.", runtime.dbusReconnects)
        m.family("beacond_adapter_up", "gauge", "1 when the adapter is present, powered and discovering.")
        for a in runtime.adapters {
            m.sample("beacond_adapter_up", ["adapter": a.name], a.present && a.powered && a.discovering ? 1 : 0)
        }
        let timing = context.engine.timing
        m.counter("beacond_engine_turns_total", "Engine turns (a batch of input, then due timers).", timing.turns)
        m.family("beacond_engine_busy_seconds_total", "counter", "Time spent inside engine turns.")
        m.sample("beacond_engine_busy_seconds_total", [:], timing.busy.seconds)
        m.gauge("beacond_engine_last_turn_seconds", "Duration of the latest engine turn.", timing.lastTurn.seconds)
        m.gauge(
            "beacond_engine_last_turn_timestamp_seconds",
            "When the engine last answered or finished a turn (at least once a second while it runs; an alert on its age finds a stuck engine).",
            (glance.lastTurn ?? context.started).unixSeconds)
        m.gauge("beacond_stream_clients", "Open event streams.", Double(stream.count))
        if let server = transport.withLock({ $0 }) {
            m.gauge(
                "beacond_api_connections", "Connections open to the API socket.",
                Double(server.openConnections.load(ordering: .relaxed)))
            m.gauge(
                "beacond_api_buffered_request_bytes",
                "Bytes of request bodies held against the API's 16 MiB body budget.",
                Double(server.bufferedRequestBytes.load(ordering: .relaxed)))
            m.family(
                "beacond_api_refused_total", "counter",
                "Connections and requests the API refused or closed, by reason (limits in docs/api.md).")
            for (reason, count) in server.refusalCounts.sorted(by: { $0.key < $1.key }) {
                m.sample("beacond_api_refused_total", ["reason": reason], Double(count))
            }
            m.counter(
                "beacond_stream_clients_dropped_total", "Event streams closed because the client stopped reading.",
                server.streamsDropped.load(ordering: .relaxed))
        }
        m.gauge("beacond_uptime_seconds", "Seconds since start.", (now - context.started).seconds)
        return .response(
            HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: m.text))
    }
}

/// Accumulates the exposition text, one `# HELP`/`# TYPE` per family.
struct MetricsText {
    private(set) var text = ""

    mutating func family(_ name: String, _ type: String, _ help: String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    mutating func sample(_ name: String, _ labels: [String: String], _ value: Double) {
        let labelText =
            labels.isEmpty
            ? ""
            : "{"
                + labels.sorted { $0.key < $1.key }.map { "\($0.key)=\"\(Self.escape($0.value))\"" }.joined(
                    separator: ",") + "}"
        let valueText = value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        text += "\(name)\(labelText) \(valueText)\n"
    }

    mutating func counter(_ name: String, _ help: String, _ value: Int) {
        family(name, "counter", help)
        sample(name, [:], Double(value))
    }

    mutating func gauge(_ name: String, _ help: String, _ value: Double) {
        family(name, "gauge", help)
        sample(name, [:], value)
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
