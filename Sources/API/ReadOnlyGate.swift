import BeaconCore
import HTTPServer

/// What the TCP listener (`http:`) lets through: reads only, and with `token_file` only with
/// the token. Judged on each request's head, before anything is read or answered.
///
/// Why a gate in front of the same router rather than a second API: the answers must be the
/// Unix socket's, byte for byte, so that a dashboard and `beaconctl` never disagree; what
/// differs is who may ask. Every change stays on the socket, where the kernel says who the
/// peer is; a network client has no such credentials, so it is never an admin.
public struct ReadOnlyGate: Sendable {
    /// The token every request must carry; nil: none is asked (loopback, or said openly).
    let token: [UInt8]?

    /// Names besides IP addresses and `localhost` that the listener answers to without a
    /// token (`http.listen`'s host when it is a name).
    let hosts: Set<String>

    public init(token: String?, hosts: Set<String> = []) {
        self.token = token.map { Array($0.utf8) }
        self.hosts = Set(hosts.map { $0.lowercased() })
    }

    /// The refusal for a request, or nil to let the router answer it.
    public func refusal(_ request: HTTPRequest, router: APIRouter) -> HTTPResponse? {
        if token == nil, let host = request.header("host"), !answers(host: host) {
            return HTTPResponse.error(
                status: 421, code: "host_not_allowed",
                message: "this listener has no token and answers only for localhost, IP addresses and "
                    + "http.listen's host, so that a web page cannot reach it through a name of its own "
                    + "(DNS rebinding); give http.token_file to be reached by other names")
        }
        if token != nil && !authorized(request) {
            var response = HTTPResponse.error(
                status: 401, code: "unauthorized",
                message: "this listener needs its token: Authorization: Bearer <token> (http.token_file)")
            response.headers.append((name: "WWW-Authenticate", value: "Bearer realm=\"beacond\""))
            return response
        }
        guard case let .route(route, _) = router.resolve(request) else {
            return router.admission(request)
                ?? HTTPResponse.error(status: 404, code: "not_found", message: request.path)
        }
        guard request.method == "GET" else { return readOnly(request) }
        guard route.network else {
            let served = APIRouter.routes.filter(\.network).map { "/" + $0.pattern.joined(separator: "/") }
            return HTTPResponse.error(
                status: 404, code: "not_served",
                message: "\(request.path) is served on the Unix socket only; this listener serves "
                    + served.joined(separator: ", "))
        }
        return router.admission(request)
    }

    private func readOnly(_ request: HTTPRequest) -> HTTPResponse {
        var response = HTTPResponse.error(
            status: 405, code: "read_only",
            message: "\(request.method) \(request.path) is not served on the TCP listener: it only reads; "
                + "changes go through the Unix socket (beaconctl), where the peer's credentials are known")
        response.headers.append((name: "Allow", value: "GET"))
        return response
    }

    /// The token from `Authorization: Bearer`, the view's cookie (`beacond_token`) or the
    /// address's `?token=`, compared in constant time.
    func authorized(_ request: HTTPRequest) -> Bool {
        guard let token else { return true }
        var offered: [String] = []
        if let header = request.header("authorization"), header.lowercased().hasPrefix("bearer ") {
            offered.append(String(header.dropFirst(7).trimmingWhitespace))
        }
        if let cookies = request.header("cookie") {
            for pair in cookies.split(separator: ";") {
                let item = pair.trimmingWhitespace
                if item.hasPrefix("beacond_token=") { offered.append(String(item.dropFirst(14))) }
            }
        }
        if let query = request.query["token"] {
            offered.append(query)
            // A raw token from the documented `base64` recipe holds `+`, which a query decodes
            // as a space: the token as it was written is tried too.
            offered.append(String(query.map { $0 == " " ? "+" : $0 }))
        }
        return offered.contains { Self.equal(Array($0.utf8), token) }
    }

    /// Whether a `Host` header names this listener: an IP address, `localhost`, or `hosts`.
    func answers(host header: String) -> Bool {
        var name = Substring(Substring(header).trimmingWhitespace.lowercased())
        if name.hasPrefix("[") { return name.contains("]") }  // an IPv6 literal
        if let colon = name.lastIndex(of: ":") { name = name[..<colon] }
        if name.hasSuffix(".") { name = name.dropLast() }
        return name == "localhost" || hosts.contains(String(name)) || Self.isIPv4(name)
    }

    /// A dotted quad of numbers 0…255.
    static func isIPv4(_ text: Substring) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { p in
                !p.isEmpty && p.count <= 3 && p.allSatisfy { ("0"..."9").contains($0) } && Int(p)! <= 255
            }
    }

    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}
