import Foundation

/// A plain HTTP/1.1 client over a Unix socket, for talking to the daemon's API in tests:
/// written against the protocol, not against our server's code.
public struct UnixHTTPClient: Sendable {
    public let socketPath: String

    public init(socketPath: String) { self.socketPath = socketPath }

    public struct Response: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: String
        /// The body as JSON (objects as [String: Any]).
        public var json: Any? { try? JSONSerialization.jsonObject(with: Data(body.utf8), options: [.fragmentsAllowed]) }
        public var object: [String: Any] { json as? [String: Any] ?? [:] }
    }

    /// Connects, or throws when the socket is not there (yet).
    public func connect() throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in socketPath.utf8.enumerated() { raw[i] = b }
        }
        let ok = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Foundation.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard ok == 0 else {
            close(fd)
            throw TestFailure("cannot connect to \(socketPath): \(String(cString: strerror(errno)))")
        }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    public func request(
        _ method: String, _ path: String, body: String? = nil, headers: [String: String] = [:]
    ) throws -> Response {
        try request(method, path, bodyBytes: body.map { Array($0.utf8) }, headers: headers)
    }

    public func request(
        _ method: String, _ path: String, bodyBytes: [UInt8]?, headers: [String: String] = [:]
    ) throws -> Response {
        let fd = try connect()
        defer { close(fd) }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        for (k, v) in headers { head += "\(k): \(v)\r\n" }
        if let bodyBytes { head += "Content-Length: \(bodyBytes.count)\r\n" }
        head += "\r\n"
        // A server may answer (413) and stop reading before the body is sent: read its answer.
        try? sendAll(fd, Array(head.utf8) + (bodyBytes ?? []))
        return try Self.parse(Self.readAll(fd))
    }

    /// Sends `bytes` as they are (several requests in a row, say), optionally says it has
    /// finished sending (`shutdown(SHUT_WR)`), and returns all the server writes until it closes.
    public func exchange(_ bytes: [UInt8], halfClose: Bool = false) throws -> String {
        let fd = try open(sending: bytes)
        defer { close(fd) }
        if halfClose { shutdown(fd, Int32(SHUT_WR)) }
        return String(decoding: Self.readAll(fd), as: UTF8.self)
    }

    /// Everything the server writes until it closes (or the receive timeout passes).
    public static func readAll(_ fd: Int32) -> [UInt8] {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 { break }
            data += chunk[0..<n]
        }
        return data
    }

    /// A connection with `bytes` sent on it, for a test that reads or closes it itself.
    public func open(sending bytes: [UInt8]) throws -> Int32 {
        let fd = try connect()
        do { try sendAll(fd, bytes) } catch {
            close(fd)
            throw error
        }
        return fd
    }

    static func parse(_ data: [UInt8]) throws -> Response {
        let text = String(decoding: data, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { throw TestFailure("no complete response: \(text)") }
        let headLines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let statusParts = headLines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw TestFailure("bad status line: \(headLines[0])")
        }
        var headers: [String: String] = [:]
        for line in headLines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return Response(status: status, headers: headers, body: String(text[split.upperBound...]))
    }

    /// Opens `GET /v1/events/stream` and returns a reader of its events.
    public func stream(query: String = "", lastEventID: String? = nil) throws -> EventStreamReader {
        let fd = try connect()
        var head = "GET /v1/events/stream\(query) HTTP/1.1\r\nHost: localhost\r\n"
        if let lastEventID { head += "Last-Event-ID: \(lastEventID)\r\n" }
        head += "\r\n"
        try sendAll(fd, Array(head.utf8))
        return EventStreamReader(fd: fd)
    }
}

func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws {
    var offset = 0
    while offset < bytes.count {
        let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard n > 0 else { throw TestFailure("send failed: \(String(cString: strerror(errno)))") }
        offset += n
    }
}

/// Reads Server-Sent Events from an open stream: `id`, `event` and `data` per event.
public final class EventStreamReader {
    public struct Message: Sendable {
        public var id: String?
        public var event: String?
        public var data: String
    }

    private var fd: Int32
    private var buffer: [UInt8] = []
    private var headerSkipped = false
    public private(set) var status = 0

    init(fd: Int32) { self.fd = fd }
    deinit { close() }

    /// Closes once: a second close(2) of the same number would close whatever the process
    /// opened under it since, such as the socket by which Foundation's Process learns that a
    /// broker it started has exited (it then waited on the running broker, and every test
    /// waiting for a process hung behind it).
    public func close() {
        if fd >= 0 { Foundation.close(fd) }
        fd = -1
    }

    /// The next event (comments skipped), waiting at most `timeout` seconds; nil on timeout.
    public func next(timeout: Double = 10) throws -> Message? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if !headerSkipped, let end = find([13, 10, 13, 10]) {
                let head = String(decoding: buffer[..<end], as: UTF8.self)
                status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
                buffer.removeFirst(end + 4)
                headerSkipped = true
            }
            if headerSkipped, let end = find([10, 10]) {
                let block = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeFirst(end + 2)
                var message = Message(id: nil, event: nil, data: "")
                var isEvent = false
                for line in block.split(separator: "\n") {
                    if line.hasPrefix("id: ") { message.id = String(line.dropFirst(4)); isEvent = true }
                    if line.hasPrefix("event: ") { message.event = String(line.dropFirst(7)) }
                    if line.hasPrefix("data: ") { message.data = String(line.dropFirst(6)) }
                }
                if isEvent { return message }
                continue
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return nil }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, Int32(remaining * 1000) + 1) > 0 else { return nil }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = recv(fd, &chunk, chunk.count, 0)
            guard n > 0 else { throw TestFailure("stream closed by the daemon") }
            buffer += chunk[0..<n]
        }
    }

    /// The next `count` events, or a failure naming how many arrived.
    public func next(_ count: Int, timeout: Double = 10) throws -> [Message] {
        var out: [Message] = []
        let deadline = Date().addingTimeInterval(timeout)
        while out.count < count {
            guard let m = try next(timeout: max(0, deadline.timeIntervalSinceNow)) else {
                throw TestFailure("only \(out.count) of \(count) events arrived: \(out.map { $0.event ?? "" })")
            }
            out.append(m)
        }
        return out
    }

    private func find(_ pattern: [UInt8]) -> Int? {
        guard buffer.count >= pattern.count else { return nil }
        for i in 0...(buffer.count - pattern.count) where buffer[i] == pattern[0] {
            if Array(buffer[i..<i + pattern.count]) == pattern { return i }
        }
        return nil
    }
}
