import APIModel
import BeaconConfig
import BeaconCore
import BeaconRuntime
import HTTPServer

/// `GET /v1/floor`: what the floor view draws besides the assets — the floor's outline, its
/// levels, the receivers with how recently each was heard, and the zones — in one answer, so
/// that the page needs no knowledge of the configuration file. `GET /` is the view itself.
extension APIRouter {
    /// A receiver not heard for this long is drawn grey (it is silent, or unplugged).
    static let silentAfter = 30.0

    func floor() -> HTTPReply {
        let config = context.config
        let tallies = currentGlance().receivers
        let now = context.clock()
        let receivers: [JSONValue] = config.receivers.map { r in
            let tally = tallies[r.id]
            let age = (now - (tally?.lastHeard ?? context.started)).seconds
            return .object([
                ("id", .string(r.id)), ("x", .number(r.x)), ("y", .number(r.y)), ("level", .int(r.level)),
                ("sightings", .int(tally?.sightings ?? 0)), ("last_heard_age_s", .round(max(0, age), places: 10)),
                ("silent", .bool(age >= Self.silentAfter)),
            ])
        }
        let outline = config.positioning.floor.map { points in
            JSONValue.array(points.map { .array([.number($0.x), .number($0.y)]) })
        }
        var levels = Set(config.receivers.map(\.level))
        for zone in config.zones { if case let .polygon(level, _) = zone.shape { levels.insert(level) } }
        if levels.isEmpty { levels.insert(0) }
        return Reply.json(
            .object([
                ("floor", outline ?? .null), ("levels", .array(levels.sorted().map { .int($0) })),
                ("receivers", .array(receivers)), ("zones", zonesJSON()),
                ("silent_after_s", .number(Self.silentAfter)),
            ]))
    }

    /// The floor view (`FloorViewPage`): one self-contained page, no network beyond this daemon.
    func floorView() -> HTTPReply {
        var response = HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", body: FloorViewPage.html)
        // The page needs nothing from elsewhere, and says so to the browser.
        response.headers.append(
            (
                name: "Content-Security-Policy",
                value: "default-src 'self'; script-src 'unsafe-inline' 'self'; style-src 'unsafe-inline' 'self'; "
                    + "img-src 'self' data:; connect-src 'self'"
            ))
        response.headers.append((name: "Cache-Control", value: "no-store"))
        return .response(response)
    }
}
