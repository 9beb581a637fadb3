import APIModel
import BeaconConfig
import BeaconCore
import HTTPServer

/// `GET /v1/tags[?missing=true][&battery_low=true]` (SPEC §7.5): every asset's tag, worst
/// first, with whether it is missing and whether its battery is low as the engine decided
/// them — the same states that raised `asset.missing` and `asset.battery_low`.
extension APIRouter {
    func tags(_ query: [String: String]) -> HTTPReply {
        var only: [String] = []
        for key in ["missing", "battery_low"] {
            switch query[key] {
            case nil, "false": break
            case "true": only.append(key)
            case let other?:
                return Reply.error(400, "bad_\(key)", "\(key): expected true or false, got \"\(other.prefix(40))\"")
            }
        }
        guard let all = tagList(at: nil) else { return engineUnavailable() }
        var list = TagList()
        list.tags = all.filter { tag in
            (!only.contains("missing") || tag.missing) && (!only.contains("battery_low") || tag.batteryLow)
        }
        list.tags.sort(by: Self.worseFirst)
        return Reply.json(list.json)
    }

    /// Every asset's tag, in configuration order, as of the engine's time (or `at`); nil
    /// when the engine does not answer.
    func tagList(at time: Timestamp?) -> [TagList.Tag]? {
        let answer = onEngine { engine, now in ((engine.tracker?.tagStates ?? [], time ?? now), []) }
        guard let (states, now) = answer else { return nil }
        return zip(context.config.assets, states).map { spec, state in Self.tag(spec, state, at: now) }
    }

    static func tag(_ spec: AssetSpec, _ state: TagState, at now: Timestamp) -> TagList.Tag {
        var tag = TagList.Tag()
        (tag.asset, tag.name) = (spec.id, spec.name)
        let t = state.telemetry
        if let mv = t.batteryMillivolts {
            tag.battery = .init(millivolts: mv, percent: t.batteryPercent, at: t.batteryAt.map(RFC3339.format))
        }
        (tag.batteryLow, tag.missing) = (state.batteryLow, state.missing)
        (tag.temperatureC, tag.moving) = (t.temperatureC, t.moving(at: now))
        tag.advertisingIntervalMilliseconds = state.interval.map { Int($0.nanoseconds / 1_000_000) }
        tag.lastSeen = state.lastSeen.map(RFC3339.format)
        if let fix = state.lastPosition {
            var p = TagList.Position()
            (p.x, p.y, p.level, p.zones) = (fix.position.x, fix.position.y, fix.level, fix.zones)
            p.at = state.positionAt.map(RFC3339.format)
            tag.lastPosition = p
        }
        return tag
    }

    /// Missing first (longest silent first), then low batteries (lowest first), then by asset.
    static func worseFirst(_ a: TagList.Tag, _ b: TagList.Tag) -> Bool {
        if a.missing != b.missing { return a.missing }
        if a.missing { return (a.lastSeen ?? "") < (b.lastSeen ?? "") }
        if a.batteryLow != b.batteryLow { return a.batteryLow }
        if a.batteryLow { return (a.battery?.millivolts ?? 0) < (b.battery?.millivolts ?? 0) }
        return a.asset < b.asset
    }
}
