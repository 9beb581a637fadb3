import BeaconCore

/// What the reserve's records hold, as JSON: the same texts the state store keeps in its rows
/// (a region's spec, an asset's snapshot), so that a record reads back as a row does.
extension DiskReserve {
    static func payload(of event: StateStore.StoredEvent) -> [UInt8] {
        let json: JSONValue = .object([
            ("id", .string(event.id)), ("type", .string(event.type)),
            ("time_ns", .string(String(event.time.nanoseconds))), ("body", .string(event.body)),
        ])
        return Array(json.serialized.utf8)
    }

    static func event(from payload: [UInt8]) -> StateStore.StoredEvent? {
        guard let json = try? JSONParser.parse(payload), let id = json["id"]?.stringValue,
            let type = json["type"]?.stringValue, let time = json["time_ns"]?.stringValue.flatMap(Int64.init),
            let body = json["body"]?.stringValue
        else { return nil }
        return StateStore.StoredEvent(id: id, type: type, time: Timestamp(nanoseconds: time), body: body)
    }

    static func payload(of states: EngineSnapshot, sequence: UInt64) -> [UInt8] {
        let regions: [JSONValue] = states.regions.map { s in
            .object([
                ("client", .string(s.client)), ("spec", .string(s.spec.json.serialized)),
                ("state", .string(s.state.rawValue)), ("last_seen_ns", .string(String(s.lastSeen.nanoseconds))),
                ("entered_at_ns", .string(String(s.enteredAt.nanoseconds))),
                ("dwells_fired", .number(Double(s.dwellsFired))),
            ])
        }
        let assets: [JSONValue] = states.assets.map { s in
            .object([("asset", .string(s.asset)), ("snapshot", .string(StateStore.json(s).serialized))])
        }
        let json: JSONValue = .object([
            ("sequence", .string(String(sequence))), ("regions", .array(regions)), ("assets", .array(assets)),
        ])
        return Array(json.serialized.utf8)
    }

    /// The states in a payload, all of them or none.
    static func states(from payload: [UInt8]) -> (UInt64, EngineSnapshot)? {
        guard let json = try? JSONParser.parse(payload),
            let sequence = json["sequence"]?.stringValue.flatMap(UInt64.init),
            case let .array(regionValues)? = json["regions"], case let .array(assetValues)? = json["assets"]
        else { return nil }
        var regions: [RegionSnapshot] = []
        for r in regionValues {
            guard let client = r["client"]?.stringValue,
                let spec = r["spec"]?.stringValue.flatMap(StateStore.regionSpec),
                let state = r["state"]?.stringValue.flatMap(RegionState.init(rawValue:)),
                let seen = r["last_seen_ns"]?.stringValue.flatMap(Int64.init),
                let entered = r["entered_at_ns"]?.stringValue.flatMap(Int64.init),
                let fired = r["dwells_fired"]?.numberValue
            else { return nil }
            regions.append(
                RegionSnapshot(
                    client: client, spec: spec, state: state, lastSeen: Timestamp(nanoseconds: seen),
                    enteredAt: Timestamp(nanoseconds: entered), dwellsFired: Int(fired)))
        }
        var assets: [AssetSnapshot] = []
        for a in assetValues {
            guard let id = a["asset"]?.stringValue, let text = a["snapshot"]?.stringValue,
                let snapshot = StateStore.assetSnapshot(asset: id, text: text)
            else { return nil }
            assets.append(snapshot)
        }
        return (sequence, EngineSnapshot(regions: regions, assets: assets))
    }
}
