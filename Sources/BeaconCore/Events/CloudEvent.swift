/// Events as CloudEvents 1.0 JSON (SPEC §3), with a fixed member order so that two runs
/// of the same replay differ only in `id`.
public enum CloudEvent {
    public static func json(_ event: Event, id: String, gatewayID: String) -> JSONValue {
        envelope(
            id: id, gatewayID: gatewayID, kind: event.payload.kind, time: event.time, subject: subject(event.payload),
            data: data(event.payload))
    }

    /// The CloudEvents envelope around `data`, for an event of type `beacond.<kind>`: the
    /// engine's events, and a webhook's test delivery, which is not one of them.
    public static func envelope(
        id: String, gatewayID: String, kind: String, time: Timestamp, subject: String, data: JSONValue
    ) -> JSONValue {
        .object([
            ("specversion", "1.0"),
            ("id", .string(id)),
            ("source", .string("beacond://\(gatewayID)")),
            ("type", .string("beacond.\(kind)")),
            ("time", .string(RFC3339.format(time))),
            ("subject", .string(subject)),
            ("datacontenttype", "application/json"),
            ("data", data),
        ])
    }

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
        }
    }

    public static func data(_ payload: EventPayload) -> JSONValue {
        switch payload {
        case let .regionState(c, r, state):
            return .object([("client", .string(c)), ("region", .string(r)), ("state", .string(state.rawValue))])
        case let .regionEnter(c, r, beacon, receiver, rssi, distance):
            return .object([
                ("client", .string(c)), ("region", .string(r)), ("beacon", json(beacon)),
                ("receiver", .string(receiver)),
                ("rssi", .number(Double(rssi))), ("distance", metres(distance)),
            ])
        case let .regionExit(c, r, lastSeen, duration):
            return .object([
                ("client", .string(c)), ("region", .string(r)), ("last_seen", .string(RFC3339.format(lastSeen))),
                ("duration_s", .number(round3(duration.seconds))),
            ])
        case let .regionDwell(c, r, dwell):
            return .object([("client", .string(c)), ("region", .string(r)), ("dwell_s", .number(dwell.seconds))])
        case let .regionFailed(c, r, reason):
            return .object([("client", .string(c)), ("region", .string(r)), ("reason", .string(reason.rawValue))])
        case let .ranging(c, r, beacons):
            return .object([
                ("client", .string(c)), ("region", .string(r)),
                (
                    "beacons",
                    .array(
                        beacons.map { b in
                            .object([
                                ("uuid", .string(b.beacon.uuid.description)),
                                ("major", .number(Double(b.beacon.major))),
                                ("minor", .number(Double(b.beacon.minor))), ("rssi", .number(round1(b.rssi))),
                                ("distance", metres(b.distance)), ("proximity", .string(b.proximity.rawValue)),
                                ("receiver", .string(b.receiver)),
                            ])
                        })
                ),
            ])
        case let .beaconProximity(beacon, proximity, distance):
            return .object([
                ("beacon", json(beacon)), ("proximity", .string(proximity.rawValue)), ("distance", metres(distance)),
            ])
        case let .adapterState(adapter, present, powered, discovering):
            return adapterData(adapter, present, powered, discovering)
        case let .assetPosition(fix):
            return .object([
                ("asset", .string(fix.asset)), ("x", .number(round2(fix.position.x))),
                ("y", .number(round2(fix.position.y))), ("level", .number(Double(fix.level))),
                ("accuracy_m", .number(round2(fix.accuracy))), ("zones", .array(fix.zones.map { .string($0) })),
                ("receivers_used", .array(fix.receivers.map { .string($0) })),
            ])
        case let .zone(alert):
            var members: [(String, JSONValue)] = [
                ("alarm", .string(alert.alarm)), ("asset", .string(alert.asset)), ("zone", .string(alert.zone)),
                ("position", position(alert.position, level: alert.level)),
            ]
            if let dwell = alert.dwell { members.append(("dwell_s", .number(round3(dwell.seconds)))) }
            return .object(members)
        }
    }

    private static func adapterData(_ adapter: String, _ present: Bool, _ powered: Bool, _ discovering: Bool)
        -> JSONValue
    {
        .object([
            ("adapter", .string(adapter)), ("present", .bool(present)), ("powered", .bool(powered)),
            ("discovering", .bool(discovering)),
        ])
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

    public static func position(_ p: Point?, level: Int?) -> JSONValue {
        guard let p else { return .null }
        return .object([
            ("x", .number(round2(p.x))), ("y", .number(round2(p.y))),
            ("level", level.map { .number(Double($0)) } ?? .null),
        ])
    }

    /// Distances to the centimetre: finer digits are noise and would only make diffs noisy.
    private static func metres(_ d: Double?) -> JSONValue { d.map { .number(round2($0)) } ?? .null }
    private static func round1(_ v: Double) -> Double { (v * 10).rounded() / 10 }
    private static func round2(_ v: Double) -> Double { (v * 100).rounded() / 100 }
    private static func round3(_ v: Double) -> Double { (v * 1000).rounded() / 1000 }
}
