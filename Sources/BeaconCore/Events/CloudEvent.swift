/// Events as CloudEvents 1.0 JSON (SPEC §3), with a fixed member order so that two runs
/// of the same replay differ only in `id`.
public enum CloudEvent {
    /// The event as one line of CloudEvents JSON, written straight to text (`JSONTextWriter`).
    public static func text(_ event: Event, id: String, gatewayID: String) -> String {
        var w = JSONTextWriter(capacity: 384)
        writeEnvelope(
            id: id, gatewayID: gatewayID, kind: event.payload.kind, time: event.time, subject: subject(event.payload),
            into: &w
        ) { writeData(event.payload, into: &$0) }
        return w.text
    }

    /// The CloudEvents envelope around `data`, for an event of type `beacond.<kind>` that is
    /// not one of the engine's: a webhook's test delivery.
    public static func text(
        id: String, gatewayID: String, kind: String, time: Timestamp, subject: String, data: JSONValue
    ) -> String {
        var w = JSONTextWriter()
        writeEnvelope(id: id, gatewayID: gatewayID, kind: kind, time: time, subject: subject, into: &w) {
            $0.value(data)
        }
        return w.text
    }

    /// An event's `data` alone.
    public static func dataText(_ payload: EventPayload) -> String {
        var w = JSONTextWriter()
        writeData(payload, into: &w)
        return w.text
    }

    private static func writeEnvelope(
        id: String, gatewayID: String, kind: String, time: Timestamp, subject: String, into w: inout JSONTextWriter,
        data: (inout JSONTextWriter) -> Void
    ) {
        w.openObject()
        w.member("specversion", "1.0")
        w.member("id", id)
        w.member("source", "beacond://\(gatewayID)")
        w.member("type", "beacond.\(kind)")
        w.member("time", RFC3339.format(time))
        w.member("subject", subject)
        w.member("datacontenttype", "application/json")
        w.member("dataschema", dataSchema(kind))
        w.key("data")
        data(&w)
        w.closeObject()
    }

    /// The `$id` of the JSON Schema of a kind's `data` (docs/openapi.json's components, and
    /// `GET /v1/schemas/{type}`): receivers validate `data` with it, and a version that
    /// changed a shape would say so here.
    public static func dataSchema(_ kind: String) -> String { "urn:beacond:schema:\(kind):1" }

    public static func subject(_ payload: EventPayload) -> String {
        switch payload {
        case let .regionState(c, r, _), let .regionEnter(c, r, _, _, _, _), let .regionExit(c, r, _, _),
            let .regionDwell(c, r, _), let .regionFailed(c, r, _), let .ranging(c, r, _):
            return "\(c)/\(r)"
        case let .beaconProximity(beacon, _, _):
            return beacon.description
        case let .adapterState(adapter, _, _, _):
            return adapter
        case let .assetPosition(fix):
            return fix.asset
        case let .zone(alert):
            return alert.asset
        case let .tag(alert):
            return alert.asset
        case let .zoneVisit(visit):
            return visit.asset
        }
    }

    private static func writeData(_ payload: EventPayload, into w: inout JSONTextWriter) {
        w.openObject()
        switch payload {
        case let .regionState(c, r, state):
            writeRegion(c, r, into: &w)
            w.member("state", state.rawValue)
        case let .regionEnter(c, r, beacon, receiver, rssi, distance):
            writeRegion(c, r, into: &w)
            w.key("beacon")
            write(beacon, into: &w)
            w.member("receiver", receiver)
            w.key("rssi")
            w.int(rssi)
            w.member("distance", distance.map(round2))
        case let .regionExit(c, r, lastSeen, duration):
            writeRegion(c, r, into: &w)
            w.member("last_seen", RFC3339.format(lastSeen))
            w.member("duration_s", round3(duration.seconds))
        case let .regionDwell(c, r, dwell):
            writeRegion(c, r, into: &w)
            w.member("dwell_s", dwell.seconds)
        case let .regionFailed(c, r, reason):
            writeRegion(c, r, into: &w)
            w.member("reason", reason.rawValue)
        case let .ranging(c, r, beacons):
            writeRegion(c, r, into: &w)
            w.key("beacons")
            w.openArray()
            for b in beacons {
                w.openObject()
                w.member("uuid", b.beacon.uuid.description)
                w.member("major", Double(b.beacon.major))
                w.member("minor", Double(b.beacon.minor))
                w.member("rssi", round1(b.rssi))
                w.member("distance", b.distance.map(round2))
                w.member("proximity", b.proximity.rawValue)
                w.member("receiver", b.receiver)
                w.closeObject()
            }
            w.closeArray()
        case let .beaconProximity(beacon, proximity, distance):
            w.key("beacon")
            write(beacon, into: &w)
            w.member("proximity", proximity.rawValue)
            w.member("distance", distance.map(round2))
        case let .adapterState(adapter, present, powered, discovering):
            w.member("adapter", adapter)
            w.key("present")
            w.bool(present)
            w.key("powered")
            w.bool(powered)
            w.key("discovering")
            w.bool(discovering)
        case let .assetPosition(fix):
            w.member("asset", fix.asset)
            w.member("x", round2(fix.position.x))
            w.member("y", round2(fix.position.y))
            w.member("level", Double(fix.level))
            w.member("accuracy_m", round2(fix.accuracy))
            writeStrings("zones", fix.zones, into: &w)
            writeStrings("receivers_used", fix.receivers, into: &w)
            w.key("moving")
            if let moving = fix.moving { w.bool(moving) } else { w.null() }
        case let .zone(alert):
            w.member("alarm", alert.alarm)
            w.member("asset", alert.asset)
            w.member("zone", alert.zone)
            w.key("position")
            if let p = alert.position {
                w.openObject()
                w.member("x", round2(p.x))
                w.member("y", round2(p.y))
                w.member("level", alert.level.map(Double.init))
                w.closeObject()
            } else {
                w.null()
            }
            if let dwell = alert.dwell { w.member("dwell_s", round3(dwell.seconds)) }
            if let crossed = alert.crossedAt { w.member("crossed_at", RFC3339.format(crossed)) }
            if let flap = alert.flap {
                w.key("flapping")
                w.bool(flap.settled == nil)
                w.member("since", RFC3339.format(flap.since))
                w.member("changes", Double(flap.changes))
                if let settled = flap.settled {
                    w.key("inside")
                    w.bool(settled)
                }
            }
        case let .tag(alert):
            writeTag(alert, into: &w)
        case let .zoneVisit(visit):
            w.member("asset", visit.asset)
            w.member("zone", visit.zone)
            w.member("entered", RFC3339.format(visit.entered))
            w.member("left", RFC3339.format(visit.left))
            w.member("dwell_s", round3(visit.dwell.seconds))
        }
        w.closeObject()
    }

    /// SPEC §7.4's data: battery_low `{asset, battery, temperature_c}`; missing `{asset,
    /// last_seen, last_position}`; found `{asset, missing_s, position}`.
    private static func writeTag(_ alert: TagAlert, into w: inout JSONTextWriter) {
        w.member("asset", alert.asset)
        switch alert.condition {
        case .batteryLow:
            w.key("battery")
            w.openObject()
            w.member("millivolts", alert.batteryMillivolts.map(Double.init))
            w.member("percent", alert.batteryPercent.map(Double.init))
            w.member("at", alert.batteryAt.map(RFC3339.format))
            w.closeObject()
            w.member("temperature_c", alert.temperatureC.map(round2))
        case .missing:
            w.member("last_seen", alert.lastSeen.map(RFC3339.format))
            w.key("last_position")
            writePlace(alert.position, at: alert.positionAt, into: &w)
        case .found:
            w.member("missing_s", round3(alert.missingFor?.seconds ?? 0))
            w.key("position")
            writePlace(alert.position, at: nil, into: &w)
        }
    }

    /// `{x, y, level, zones[, at]}`, or null.
    private static func writePlace(_ fix: AssetFix?, at: Timestamp?, into w: inout JSONTextWriter) {
        guard let fix else { return w.null() }
        w.openObject()
        w.member("x", round2(fix.position.x))
        w.member("y", round2(fix.position.y))
        w.member("level", Double(fix.level))
        writeStrings("zones", fix.zones, into: &w)
        if let at { w.member("at", RFC3339.format(at)) }
        w.closeObject()
    }

    private static func writeRegion(_ client: String, _ region: String, into w: inout JSONTextWriter) {
        w.member("client", client)
        w.member("region", region)
    }

    private static func write(_ id: IBeaconID, into w: inout JSONTextWriter) {
        w.openObject()
        w.member("uuid", id.uuid.description)
        w.member("major", Double(id.major))
        w.member("minor", Double(id.minor))
        w.closeObject()
    }

    private static func write(_ identity: BeaconIdentity, into w: inout JSONTextWriter) {
        switch identity {
        case let .ibeacon(id): write(id, into: &w)
        case let .eddystone(id):
            w.openObject()
            w.member("namespace", Hex.encode(id.namespace))
            w.member("instance", Hex.encode(id.instance))
            w.closeObject()
        }
    }

    private static func writeStrings(_ name: StaticString, _ items: [String], into w: inout JSONTextWriter) {
        w.key(name)
        w.openArray()
        for item in items { w.string(item) }
        w.closeArray()
    }

    public static func json(_ id: IBeaconID) -> JSONValue {
        .object([
            ("uuid", .string(id.uuid.description)), ("major", .number(Double(id.major))),
            ("minor", .number(Double(id.minor))),
        ])
    }

    public static func json(_ identity: BeaconIdentity) -> JSONValue {
        switch identity {
        case let .ibeacon(id): return json(id)
        case let .eddystone(id):
            return .object([
                ("namespace", .string(Hex.encode(id.namespace))), ("instance", .string(Hex.encode(id.instance))),
            ])
        }
    }

    /// Distances to the centimetre: finer digits are noise and would only make diffs noisy.
    private static func round1(_ v: Double) -> Double { (v * 10).rounded() / 10 }
    private static func round2(_ v: Double) -> Double { (v * 100).rounded() / 100 }
    private static func round3(_ v: Double) -> Double { (v * 1000).rounded() / 1000 }
}
