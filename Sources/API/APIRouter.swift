import BeaconConfig
import BeaconCore
import BeaconRuntime
import HTTPServer
import Publishing
import Storage
import Synchronization

/// SPEC §4.1's routes over the Unix socket. Reads are open to anyone who can connect (the
/// socket is mode 0660); requests that change something (PUT, DELETE, PATCH, POST) need
/// root or `api.admin_group`, checked from the peer's kernel credentials.
public final class APIRouter: Sendable {
    let context: APIContext
    public let stream: EventStreamHub
    /// The server carrying the API, for its counters in `/metrics` and `/v1/status`.
    let transport = Mutex<HTTPServer?>(nil)
    let slowReads = SlowReads()

    public init(context: APIContext, stream: EventStreamHub) {
        self.context = context
        self.stream = stream
    }

    /// Serves on `server`: the admin check on each request's head (before its body is read),
    /// the event stream, the server's refusals logged and counted.
    public func attach(_ server: HTTPServer) {
        transport.withLock { $0 = server }
        stream.attach(server)
        server.admit = { [weak self] request in self?.admission(request) }
        let log = context.log
        server.log = { line in log(line) }
    }

    /// Requests that change something (PUT, DELETE, PATCH, POST) need root or the admin group:
    /// refused on the head alone, so a reader cannot make the daemon take a body first.
    public func admission(_ request: HTTPRequest) -> HTTPResponse? {
        let mutating = ["PUT", "DELETE", "PATCH", "POST"].contains(request.method)
        guard mutating && !request.peer.isAdmin(group: context.config.api.adminGroup) else { return nil }
        return HTTPResponse.error(
            status: 403, code: "forbidden",
            message: "\(request.method) needs root or membership of group \(context.config.api.adminGroup) "
                + "(peer uid \(request.peer.uid))")
    }

    public func handle(_ request: HTTPRequest) -> HTTPReply {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        if let refusal = admission(request) { return .response(refusal) }
        let route = Route(method: request.method, parts: parts)
        if route.is("GET", "metrics") { return metrics() }
        if route.is("GET", "v1/status") { return status() }
        if route.is("GET", "v1/clients") { return clients() }
        if let c = route.match("GET", "v1/clients/*/regions") { return regions(client: c[0]) }
        if let c = route.match("PUT", "v1/clients/*/regions/*") {
            return monitor(client: c[0], region: c[1], body: request.body)
        }
        if let c = route.match("DELETE", "v1/clients/*/regions/*") { return unmonitor(client: c[0], region: c[1]) }
        if let c = route.match("POST", "v1/clients/*/regions/*/request-state") {
            return requestState(client: c[0], region: c[1])
        }
        if route.is("GET", "v1/beacons") { return beacons(request.query) }
        if route.is("GET", "v1/assets") { return assets(id: nil) }
        if let c = route.match("GET", "v1/assets/*") { return assets(id: c[0]) }
        if route.is("GET", "v1/zones") { return zones() }
        if route.is("GET", "v1/alarms") { return alarmList() }
        if let c = route.match("PATCH", "v1/alarms/*") { return patchAlarm(id: c[0], body: request.body) }
        if route.is("GET", "v1/events") { return events(request.query) }
        if route.is("GET", "v1/events/stream") { return stream.open(request) }
        if route.is("POST", "v1/sightings") { return sightings(request.body) }
        if route.is("GET", "v1/outbox") { return outbox() }
        if let c = route.match("POST", "v1/webhooks/*/test") { return testWebhook(id: c[0]) }
        if Self.knownPaths.contains(where: { Route(method: "", parts: parts).match("", $0) != nil }) {
            return Reply.error(405, "method_not_allowed", "\(request.method) is not allowed on \(request.path)")
        }
        return Reply.error(404, "not_found", "no such endpoint: \(request.path)")
    }

    private static let knownPaths = [
        "metrics", "v1/status", "v1/clients", "v1/clients/*/regions", "v1/clients/*/regions/*",
        "v1/clients/*/regions/*/request-state", "v1/beacons", "v1/assets", "v1/assets/*", "v1/zones", "v1/alarms",
        "v1/alarms/*", "v1/events", "v1/events/stream", "v1/sightings", "v1/outbox", "v1/webhooks/*/test",
    ]

    /// Parses a JSON request body, or says what is wrong with it.
    static func parseBody(_ body: [UInt8]) -> Result<JSONValue, JSONBodyError> {
        guard !body.isEmpty else { return .failure(JSONBodyError(message: "expected a JSON body")) }
        do {
            return .success(try JSONParser.parse(String(decoding: body, as: UTF8.self)))
        } catch {
            return .failure(JSONBodyError(message: "body is not valid JSON: \(error)"))
        }
    }
}

struct JSONBodyError: Error {
    var message: String
    var reply: HTTPReply { Reply.error(400, "bad_json", message) }
}

/// A request's method and path segments, matched against patterns like
/// `v1/clients/*/regions`, where each `*` captures one segment.
struct Route {
    var method: String
    var parts: [String]

    func match(_ method: String, _ pattern: String) -> [String]? {
        guard method == self.method else { return nil }
        let segments = pattern.split(separator: "/").map(String.init)
        guard segments.count == parts.count else { return nil }
        var captured: [String] = []
        for (segment, part) in zip(segments, parts) {
            if segment == "*" {
                captured.append(part)
            } else if segment != part {
                return nil
            }
        }
        return captured
    }

    func `is`(_ method: String, _ pattern: String) -> Bool { match(method, pattern) != nil }
}
