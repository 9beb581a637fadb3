import APIModel
import BeaconConfig
import BeaconCore
import BeaconRuntime
import HTTPServer
import Publishing
import Storage

/// Read-only views: status, beacons, the site (assets, zones, alarms) and the outbox.
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
        report.outbox.pending = depths.reduce(0) { $0 + $1.pending }
        report.outbox.deadLetters = depths.reduce(0) { $0 + $1.deadLetters }
        report.outbox.deadLettersDiscarded = depths.reduce(0) { $0 + $1.deadLettersDiscarded }
        report.outbox.oldest = depths.compactMap(\.oldest).min().map(RFC3339.format)
        report.webhooks = context.webhooks.map { Self.webhook($0, depths: depths) }
        report.stateStore = context.store?.path
        report.stateStoreError = context.store?.openFailure
        report.stateStoreWALBytes = context.store?.walBytes
        report.stateReserve = runtime.stateReserve.map {
            StatusReport.Reserve(file: $0.file, bytes: $0.bytes, alertsKept: $0.alerts)
        }
        report.lastErrors = context.errors.all
        report.unplacedReceivers = unplaced.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        report.site = runtime.site
        return Reply.json(report.json)
    }

    /// `GET /v1/beacons?limit=&offset=`: the beacons heard within `exit_timeout`, most
    /// recently heard first, a page at a time (`limit` 1…5000, default 1000), built on the
    /// engine's thread and written out on the slow-reads thread, not the server's.
    func beacons(_ query: [String: String]) -> HTTPReply {
        var limit = 1000
        var offset = 0
        if let text = query["limit"] {
            guard let n = Int(text), (1...5000).contains(n) else {
                return Reply.error(400, "bad_limit", "limit: expected an integer 1...5000, got \"\(text.prefix(40))\"")
            }
            limit = n
        }
        if let text = query["offset"] {
            guard let n = Int(text), n >= 0 else {
                return Reply.error(
                    400, "bad_offset", "offset: expected an integer 0 or more, got \"\(text.prefix(40))\"")
            }
            offset = n
        }
        return .later { [self, offset, limit] answer in
            let queued = slowReads.run { [self] in answer(beaconsPage(offset: offset, limit: limit)) }
            if !queued {
                answer(
                    HTTPResponse.error(
                        status: 503, code: "busy",
                        message: "\(SlowReads.maxQueued) beacon listings are already waiting; try again shortly"))
            }
        }
    }

    private func beaconsPage(offset: Int, limit: Int) -> HTTPResponse {
        let answer = onEngine { engine, now in
            (engine.beaconStatuses(at: now, within: engine.settings.exitTimeout, offset: offset, limit: limit), [])
        }
        guard let (total, list) = answer else {
            if case let .response(response) = engineUnavailable() { return response }
            return HTTPResponse(status: 503)
        }
        let next = offset + list.count < total ? JSONValue.int(offset + list.count) : .null
        let body: JSONValue = .object([
            (
                "beacons",
                .array(
                    list.map { b in
                        .object([
                            ("beacon", CloudEvent.json(b.identity)),
                            ("proximity", .string(b.proximity.rawValue)), ("distance", .round(b.distance)),
                            ("last_seen", .time(b.lastSeen)),
                            (
                                "receivers",
                                .array(
                                    b.readings.map { r in
                                        .object([
                                            ("receiver", .string(r.receiver)), ("rssi", .round(r.rssi, places: 10)),
                                            ("distance", .round(r.distance)), ("last_seen", .time(r.lastSeen)),
                                        ])
                                    })
                            ),
                        ])
                    })
            ),
            ("total", .int(total)), ("next", next),
        ])
        return Reply.jsonResponse(body)
    }

    /// Configured assets with their latest fix, zones and last sighting.
    func assets(id: String?) -> HTTPReply {
        let fixes = onEngine { engine, _ in (engine.tracker?.fixes ?? [], []) }
        guard let fixes else { return engineUnavailable() }
        let all = context.config.assets.map { asset -> JSONValue in
            let state = fixes.first { $0.id == asset.id }
            let fix = state?.fix
            return .object([
                ("id", .string(asset.id)), ("name", asset.name.map { .string($0) } ?? .null),
                ("beacon", Self.json(asset.beacon)),
                (
                    "position",
                    fix.map { f in
                        .object([
                            ("x", .round(f.position.x)), ("y", .round(f.position.y)), ("level", .int(f.level)),
                            ("accuracy_m", .round(f.accuracy)),
                            ("receivers_used", .array(f.receivers.map { .string($0) })),
                        ])
                    } ?? .null
                ),
                ("zones", .array((fix?.zones ?? []).map { .string($0) })),
                ("last_seen", .time(state?.lastHeard ?? nil)),
            ])
        }
        guard let id else { return Reply.json(.object([("assets", .array(all))])) }
        guard let index = context.config.assets.firstIndex(where: { $0.id == id }) else {
            return Reply.error(404, "unknown_asset", "no asset \"\(id)\"")
        }
        return Reply.json(all[index])
    }

    static func json(_ tag: AssetSpec.Tag) -> JSONValue {
        switch tag {
        case let .ibeacon(uuid, major, minor):
            var m: [(String, JSONValue)] = [("uuid", .string(uuid.description))]
            if let major { m.append(("major", .int(Int(major)))) }
            if let minor { m.append(("minor", .int(Int(minor)))) }
            return .object(m)
        case let .eddystone(namespace, instance):
            return .object([("namespace", .string(namespace)), ("instance", .string(instance))])
        case let .address(address):
            return .object([("address", .string(address))])
        }
    }

    func zones() -> HTTPReply { Reply.json(.object([("zones", zonesJSON())])) }

    /// The configured zones: a polygon on a level, or "within N metres of a receiver".
    func zonesJSON() -> JSONValue {
        .array(
            context.config.zones.map { zone in
                switch zone.shape {
                case let .polygon(level, points):
                    return .object([
                        ("id", .string(zone.id)), ("level", .int(level)),
                        ("polygon", .array(points.map { .array($0.map { .number($0) }) })),
                    ])
                case let .nearReceiver(receiver, within):
                    return .object([
                        ("id", .string(zone.id)), ("receiver", .string(receiver)), ("within", .number(within)),
                    ])
                }
            })
    }

    func alarmList() -> HTTPReply {
        let alarms = context.config.alarms
        let flags = onEngine { engine, _ in
            (alarms.map { engine.tracker?.alarmIsActive($0.id) ?? $0.active }, [])
        }
        guard let flags else { return engineUnavailable() }
        return Reply.json(
            .object([("alarms", .array(zip(context.config.alarms, flags).map { alarmJSON($0, active: $1) }))]))
    }

    func alarmJSON(_ alarm: AlarmSpec, active: Bool) -> JSONValue {
        .object([
            ("id", .string(alarm.id)), ("zones", .array(alarm.zones.map { .string($0) })),
            ("on", .array(alarm.on.map { .string($0.rawValue) })),
            ("dwell", alarm.dwell.map { .string($0.description) } ?? .null),
            ("assets", alarm.assets.map { .array($0.map { .string($0) }) } ?? .null),
            ("active", .bool(active)),
        ])
    }

    /// `{"active": true|false}` switches an alarm on or off at runtime.
    func patchAlarm(id: String, body: [UInt8]) -> HTTPReply {
        guard let alarm = context.config.alarms.first(where: { $0.id == id }) else {
            return Reply.error(404, "unknown_alarm", "no alarm \"\(id)\"")
        }
        let json: JSONValue
        switch Self.parseBody(body) {
        case let .success(value): json = value
        case let .failure(error): return error.reply
        }
        guard case let .object(members) = json, case let .bool(active)? = json["active"] else {
            return Reply.error(422, "invalid_alarm", "active: expected true or false")
        }
        if let other = members.first(where: { $0.0 != "active" }) {
            return Reply.error(422, "invalid_alarm", "\(other.0): only \"active\" can be changed")
        }
        let applied = onEngine { engine, _ in (engine.setAlarm(id, active: active), []) }
        guard applied != nil else { return engineUnavailable() }
        do {
            try context.store?.saveAlarmFlag(id, active: active)
        } catch {
            return Reply.error(
                500, "not_persisted", "the alarm is switched but the change will not survive a restart: \(error)")
        }
        return Reply.json(alarmJSON(alarm, active: active))
    }

    func outbox() -> HTTPReply {
        guard let store = context.store else {
            return Reply.error(503, "no_state_store", "the state store is unavailable; webhooks are not delivered")
        }
        do {
            let depths = try store.outboxDepths()
            let dead = try store.deadLetters(limit: 100)
            return Reply.json(
                .object([
                    ("webhooks", .array(context.webhooks.map { Self.webhook($0, depths: depths).json })),
                    (
                        "dead_letters",
                        .array(
                            dead.map { d in
                                .object([
                                    ("webhook", .string(d.webhook)), ("id", .string(d.eventID)),
                                    ("type", .string(d.type)),
                                    ("enqueued", .time(d.enqueuedAt)), ("dead", .time(d.diedAt)),
                                    ("reason", .string(d.reason)),
                                ])
                            })
                    ),
                ]))
        } catch {
            return Reply.error(500, "store_unreadable", "\(error)")
        }
    }
}
