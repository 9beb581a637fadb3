import HTTPServer

/// One route of the API, declared once: the table (`APIRouter.routes`) answers the request,
/// says which methods a path allows (405 with `Allow`), which paths exist (404), and which
/// requests need an admin — all before a body is read.
struct APIRoute: Sendable {
    let method: String
    /// Path segments; `*` captures one segment.
    let pattern: [String]
    /// Needs root or `api.admin_group` (SPEC §4.1: everything that changes something).
    let admin: Bool
    /// Also served on the read-only TCP listener (`ReadOnlyGate`): the floor view, health,
    /// positions, zones, beacons, the history and its stream, and the contract.
    let network: Bool
    let handle: @Sendable (APIRouter, HTTPRequest, [String]) -> HTTPReply

    init(
        _ method: String, _ pattern: String, admin: Bool = false, network: Bool = false,
        _ handle: @escaping @Sendable (APIRouter, HTTPRequest, [String]) -> HTTPReply
    ) {
        self.method = method
        self.pattern = pattern.split(separator: "/").map(String.init)
        self.admin = admin
        self.network = network
        self.handle = handle
    }

    /// The captured segments when `parts` is this route's path, else nil.
    func captures(_ parts: [String]) -> [String]? {
        guard pattern.count == parts.count else { return nil }
        var captured: [String] = []
        for (segment, part) in zip(pattern, parts) {
            if segment == "*" {
                captured.append(part)
            } else if segment != part {
                return nil
            }
        }
        return captured
    }
}

extension APIRouter {
    /// SPEC §4.1, in the order docs/api.md lists it.
    static let routes: [APIRoute] = [
        APIRoute("GET", "", network: true) { r, q, _ in r.floorView(q) },
        APIRoute("GET", "metrics", network: true) { r, _, _ in r.metrics() },
        APIRoute("GET", "v1/status", network: true) { r, _, _ in r.status() },
        APIRoute("GET", "v1/clients") { r, _, _ in r.clients() },
        APIRoute("GET", "v1/clients/*/regions") { r, _, c in r.regions(client: c[0]) },
        APIRoute("PUT", "v1/clients/*/regions/*", admin: true) { r, q, c in
            r.monitor(client: c[0], region: c[1], body: q.body)
        },
        APIRoute("DELETE", "v1/clients/*/regions/*", admin: true) { r, _, c in r.unmonitor(client: c[0], region: c[1])
        },
        APIRoute("POST", "v1/clients/*/regions/*/request-state", admin: true) { r, _, c in
            r.requestState(client: c[0], region: c[1])
        },
        APIRoute("GET", "v1/beacons", network: true) { r, q, _ in r.beacons(q.query) },
        APIRoute("GET", "v1/assets", network: true) { r, _, _ in r.assets(id: nil) },
        APIRoute("GET", "v1/assets/*", network: true) { r, _, c in r.assets(id: c[0]) },
        APIRoute("GET", "v1/assets/*/readings") { r, _, c in r.assetReadings(id: c[0]) },
        APIRoute("GET", "v1/tags", network: true) { r, q, _ in r.tags(q.query) },
        APIRoute("GET", "v1/zones", network: true) { r, _, _ in r.zones() },
        APIRoute("GET", "v1/zones/*/stats", network: true) { r, q, c in r.zoneStats(id: c[0], q.query) },
        APIRoute("GET", "v1/analytics/heatmap", network: true) { r, q, _ in r.heatmap(q.query) },
        APIRoute("GET", "v1/floor", network: true) { r, _, _ in r.floor() },
        APIRoute("GET", "v1/floor/image", network: true) { r, _, _ in r.floorImage() },
        APIRoute("GET", "v1/calibration") { r, _, _ in r.calibration() },
        APIRoute("DELETE", "v1/calibration", admin: true) { r, _, _ in r.resetCalibration() },
        APIRoute("GET", "v1/alarms") { r, _, _ in r.alarmList() },
        APIRoute("PATCH", "v1/alarms/*", admin: true) { r, q, c in r.patchAlarm(id: c[0], body: q.body) },
        APIRoute("GET", "v1/events", network: true) { r, q, _ in r.events(q.query) },
        APIRoute("GET", "v1/events/stream", network: true) { r, q, _ in r.stream.open(q) },
        APIRoute("POST", "v1/sightings", admin: true) { r, q, _ in r.sightings(q.body) },
        APIRoute("GET", "v1/outbox") { r, _, _ in r.outbox() },
        APIRoute("POST", "v1/webhooks/*/test", admin: true) { r, _, c in r.testWebhook(id: c[0]) },
        APIRoute("GET", "v1/reachability") { r, _, _ in r.reachability() },
        APIRoute("GET", "v1/openapi.json", network: true) { r, _, _ in r.openAPI() },
        APIRoute("GET", "v1/schemas/*", network: true) { r, _, c in r.eventSchema(type: c[0]) },
    ]

    /// What the table makes of a request: its route and captures, or the answer when there
    /// is none (404, or 405 naming the methods the path has).
    enum Resolution {
        case route(APIRoute, captures: [String])
        case refused(HTTPResponse)
    }

    func resolve(_ request: HTTPRequest) -> Resolution {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        var allowed: [String] = []
        for route in Self.routes {
            guard let captured = route.captures(parts) else { continue }
            if route.method == request.method { return .route(route, captures: captured) }
            allowed.append(route.method)
        }
        guard !allowed.isEmpty else {
            return .refused(
                HTTPResponse.error(status: 404, code: "not_found", message: "no such endpoint: \(request.path)"))
        }
        var response = HTTPResponse.error(
            status: 405, code: "method_not_allowed", message: "\(request.method) is not allowed on \(request.path)")
        response.headers.append((name: "Allow", value: allowed.joined(separator: ", ")))
        return .refused(response)
    }
}
