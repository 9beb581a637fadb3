import APIModel
import BeaconConfig
import BeaconCore
import BeaconRuntime
import HTTPServer
import Publishing
import Storage

/// `GET /v1/assets` and `GET /v1/zones`: the site's assets with their fixes, and its zones.
extension APIRouter {
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
}
