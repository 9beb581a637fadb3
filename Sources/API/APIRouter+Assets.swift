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
        let read = onEngine { engine, _ in
            ((engine.tracker?.fixes ?? [], engine.tracker?.flapping ?? [:], engine.tracker?.motions ?? [:]), [])
        }
        guard let (fixes, flapping, motions) = read else { return engineUnavailable() }
        let all = context.config.assets.map { spec -> AssetList.Asset in
            let state = fixes.first { $0.id == spec.id }
            var asset = AssetList.Asset()
            (asset.id, asset.name, asset.tag) = (spec.id, spec.name, Self.tag(spec.beacon))
            if let fix = state?.fix {
                var p = AssetList.Position()
                (p.x, p.y, p.level, p.accuracy) = (fix.position.x, fix.position.y, fix.level, fix.accuracy)
                p.receiversUsed = fix.receivers
                asset.position = p
                asset.zones = fix.zones
            }
            asset.flapping = flapping[spec.id] ?? []
            if state?.fix != nil, let motion = motions[spec.id] {
                (asset.moving, asset.motionSince) = (motion.moving, RFC3339.format(motion.since))
            }
            asset.lastSeen = state?.lastHeard.map(RFC3339.format)
            return asset
        }
        guard let id else {
            var list = AssetList()
            list.assets = all
            return Reply.json(list.json)
        }
        guard let index = context.config.assets.firstIndex(where: { $0.id == id }) else {
            return Reply.error(404, "unknown_asset", "no asset \"\(id)\"")
        }
        return Reply.json(all[index].json)
    }

    static func tag(_ tag: AssetSpec.Tag) -> BeaconTag {
        switch tag {
        case let .ibeacon(uuid, major, minor):
            return .ibeacon(uuid: uuid.description, major: major.map { Int($0) }, minor: minor.map { Int($0) })
        case let .eddystone(namespace, instance): return .eddystone(namespace: namespace, instance: instance)
        case let .address(address): return .address(address)
        case .irk: return .irk
        }
    }

    func zones() -> HTTPReply { Reply.json(.object([("zones", FloorReport.json(zoneReports()))])) }

    /// The configured zones: a polygon on a level, or "within N metres of a receiver".
    func zoneReports() -> [FloorReport.Zone] {
        context.config.zones.map { zone in
            switch zone.shape {
            case let .polygon(level, points): return .init(id: zone.id, shape: .polygon(level: level, points: points))
            case let .nearReceiver(receiver, within):
                return .init(id: zone.id, shape: .nearReceiver(receiver, within: within))
            }
        }
    }
}
