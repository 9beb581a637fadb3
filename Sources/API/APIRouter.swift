import BeaconConfig
import BeaconCore
import BeaconRuntime
import HTTPServer
import Publishing
import Storage
import Synchronization

/// SPEC §4.1's routes (`APIRouter.routes`) over the Unix socket. Reads are open to anyone
/// who can connect (the socket is mode 0660); requests that change something need root or
/// `api.admin_group`, checked from the peer's kernel credentials on the request's head.
public final class APIRouter: Sendable {
    let context: APIContext
    public let stream: EventStreamHub
    /// The server carrying the API, for its counters in `/metrics` and `/v1/status`.
    let transport = Mutex<HTTPServer?>(nil)
    let slowReads = SlowReads()
    let reachabilityProbe = ReachabilityProbe()

    public init(context: APIContext, stream: EventStreamHub) {
        self.context = context
        self.stream = stream
    }

    /// What a server carrying this router is made with: the admin check on each request's head
    /// (before its body is read; `admit` replaces it, a listener's own gate), the event
    /// stream's, and the log its refusals go to.
    public func server(
        _ settings: HTTPServer.Settings, admit: (@Sendable (HTTPRequest) -> HTTPResponse?)? = nil
    ) -> HTTPServer {
        let streams = stream.serverHooks
        let hooks = HTTPServer.Hooks(
            admit: admit ?? { [weak self] request in self?.admission(request) },
            onStreamClosed: streams.onStreamClosed, onStreamDrained: streams.onStreamDrained, onTick: streams.onTick)
        let server = HTTPServer(settings: settings, hooks: hooks, logger: context.logger, handler: handle)
        transport.withLock { $0 = server }
        stream.attach(server)
        return server
    }

    /// Makes `/metrics` and `/v1/status` count `server`'s connections and refusals: a second
    /// listener's router (the TCP one) reports the socket's, so both answer alike.
    public func reportConnections(of server: HTTPServer) {
        transport.withLock { $0 = server }
    }

    /// Answers on a request's head alone, before its body is read, when the route table
    /// refuses it: an unknown path (404), a method the path has not (405 with `Allow`), or a
    /// route that needs root or the admin group and a peer that is neither (403) — so a
    /// reader cannot make the daemon take a body first.
    public func admission(_ request: HTTPRequest) -> HTTPResponse? {
        switch resolve(request) {
        case let .refused(response): response
        case let .route(route, _): forbidden(route, request)
        }
    }

    public func handle(_ request: HTTPRequest) -> HTTPReply {
        switch resolve(request) {
        case let .refused(response): return .response(response)
        case let .route(route, captures):
            if let refusal = forbidden(route, request) { return .response(refusal) }
            return route.handle(self, request, captures)
        }
    }

    private func forbidden(_ route: APIRoute, _ request: HTTPRequest) -> HTTPResponse? {
        guard route.admin, !request.peer.isAdmin(group: context.config.api.adminGroup) else { return nil }
        return HTTPResponse.error(
            status: 403, code: "forbidden",
            message: "\(request.method) needs root or membership of group \(context.config.api.adminGroup) "
                + "(peer uid \(request.peer.uid))")
    }

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
