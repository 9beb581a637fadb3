/// A request as the API handlers see it: parsed head, whole body, and who sent it.
public struct HTTPRequest: Sendable {
    public var method: String
    /// The path without the query, percent-decoded.
    public var path: String
    public var query: [String: String]
    /// Header names in lower case, in arrival order.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// The peer's credentials from the socket (`SO_PEERCRED`), read once at accept.
    public var peer: PeerCredentials

    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name == lower }?.value
    }
}

/// A complete response. Handlers return this, or ask for a stream (see `HTTPReply`).
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public init(status: Int, contentType: String, body: String) {
        self.init(status: status, headers: [("Content-Type", contentType)], body: Array(body.utf8))
    }

    /// The status line and headers, with Content-Length (or none, for a stream).
    func head(keepAlive: Bool, streaming: Bool = false) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(HTTPResponse.reason(status))\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if streaming {
            text += "Cache-Control: no-cache\r\nConnection: close\r\n\r\n"
        } else {
            text += "Content-Length: \(body.count)\r\n"
            text += keepAlive ? "\r\n" : "Connection: close\r\n\r\n"
        }
        return Array(text.utf8)
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        default: "Status \(status)"
        }
    }
}

/// What a handler answers: a response, or a stream that stays open (Server-Sent Events).
public enum HTTPReply: Sendable {
    case response(HTTPResponse)
    /// Sends `head` (its body is ignored), then calls `opened` on the server's thread with
    /// the stream's id; the stream is then written with `HTTPServer.send(_:to:)`.
    case stream(head: HTTPResponse, opened: @Sendable (StreamID) -> Void)
    /// The answer comes later, from work that waits on something else (the network): `start`
    /// is called on the server's thread with `answer`, which the work calls once, from any
    /// thread. Meanwhile the server serves every other client; this connection's next
    /// requests wait behind the answer, as HTTP/1.1 orders them.
    case later(start: @Sendable (_ answer: @escaping @Sendable (HTTPResponse) -> Void) -> Void)
}

/// A request whose answer is owed (`HTTPReply.later`).
struct LaterID: Hashable, Sendable {
    let raw: Int
}

/// An open stream, for `HTTPServer.send` and `close`.
public struct StreamID: Hashable, Sendable, CustomStringConvertible {
    public let raw: Int
    public var description: String { "stream-\(raw)" }
}

extension HTTPRequest {
    /// The request a parsed head and its body make, as the server hands it to its handler.
    package init(head: HTTPRequestParser.Head, body: [UInt8], peer: PeerCredentials) {
        let (path, query) = HTTPRequestParser.splitTarget(head.target)
        self.init(method: head.method, path: path, query: query, headers: head.headers, body: body, peer: peer)
    }
}
