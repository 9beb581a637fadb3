import APIModel
import BeaconCore
import POSIX

#if canImport(Glibc)
    import Glibc
#endif

/// HTTP/1.1 to the daemon's Unix socket, one request per connection. Failures carry the
/// exit status an operator's script can act on.
struct APIClient {
    let socketPath: String

    struct Failure: Error, CustomStringConvertible {
        var message: String
        var status: Int32
        var description: String { message }
    }

    /// sysexits.h: what went wrong, for scripts.
    enum Exit {
        static let refused: Int32 = 1  // the daemon answered with an error
        static let protocolError: Int32 = 70  // EX_SOFTWARE: an answer we cannot read
        static let unavailable: Int32 = 69  // EX_UNAVAILABLE: no daemon on the socket
        static let permission: Int32 = 77  // EX_NOPERM: the socket or the request is not ours
    }

    struct Response {
        var status: Int
        var body: String
        var json: JSONValue? { try? JSONParser.parse(body) }

        /// The API's error message, or the body.
        var errorMessage: String {
            if let error = json.flatMap(APIErrorAnswer.init(json:)) { return "\(error.message) (\(error.code))" }
            return body.isEmpty ? "HTTP \(status)" : body
        }
    }

    func connect() throws(Failure) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in socketPath.utf8.prefix(raw.count - 1).enumerated() { raw[i] = b }
        }
        let ok = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if ok == 0 { return fd }
        let code = errno
        close(fd)
        switch code {
        case EACCES, EPERM:
            throw Failure(
                message: "\(socketPath): permission denied. Run as root, or join the group that owns the socket "
                    + "(ls -l \(socketPath)).", status: Exit.permission)
        case ENOENT, ECONNREFUSED:
            throw Failure(
                message: "\(socketPath): beacond is not running (no one listens on the socket). "
                    + "Check `systemctl status beacond`, or give --socket PATH.", status: Exit.unavailable)
        default:
            throw Failure(message: "\(socketPath): \(String(cString: strerror(code)))", status: Exit.unavailable)
        }
    }

    func request(_ method: String, _ path: String, body: String? = nil) throws(Failure) -> Response {
        let fd = try connect()
        defer { close(fd) }
        var text = "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        if let body { text += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
        text += "\r\n" + (body ?? "")
        guard writeAll(fd: fd, text) else {
            throw Failure(message: "\(socketPath): the daemon closed the connection", status: Exit.unavailable)
        }
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            data += chunk[0..<n]
        }
        guard let split = find(data, [13, 10, 13, 10]) else {
            throw Failure(message: "no answer from the daemon", status: Exit.protocolError)
        }
        let head = String(decoding: data[..<split], as: UTF8.self)
        guard let status = Int(head.split(separator: " ").dropFirst().first ?? "") else {
            throw Failure(message: "unreadable answer: \(head)", status: Exit.protocolError)
        }
        let response = Response(status: status, body: String(decoding: data[(split + 4)...], as: UTF8.self))
        if status == 403 { throw Failure(message: response.errorMessage, status: Exit.permission) }
        guard (200..<300).contains(status) else { throw Failure(message: response.errorMessage, status: Exit.refused) }
        return response
    }

    /// GET and parse a JSON answer.
    func get(_ path: String) throws(Failure) -> JSONValue {
        let response = try request("GET", path)
        guard let json = response.json else {
            throw Failure(message: "the daemon's answer is not JSON", status: Exit.protocolError)
        }
        return json
    }

    /// Follows the event stream, calling `onEvent(id, json)`; returns when the daemon closes it.
    func stream(query: String, lastEventID: String?, onEvent: (String, String) -> Void) throws(Failure) {
        let fd = try connect()
        defer { close(fd) }
        var text = "GET /v1/events/stream\(query) HTTP/1.1\r\nHost: localhost\r\n"
        if let lastEventID { text += "Last-Event-ID: \(lastEventID)\r\n" }
        text += "\r\n"
        guard writeAll(fd: fd, text) else { return }
        var buffer: [UInt8] = []
        var headDone = false
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            buffer += chunk[0..<n]
            if !headDone {
                guard let end = find(buffer, [13, 10, 13, 10]) else { continue }
                let head = String(decoding: buffer[..<end], as: UTF8.self)
                if !head.hasPrefix("HTTP/1.1 200") {
                    throw Failure(message: "the stream was refused: \(head)", status: Exit.refused)
                }
                buffer.removeFirst(end + 4)
                headDone = true
            }
            while let end = find(buffer, [10, 10]) {
                let block = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeFirst(end + 2)
                var id: String?
                var data = ""
                for line in block.split(separator: "\n") {
                    if line.hasPrefix("id: ") { id = String(line.dropFirst(4)) }
                    if line.hasPrefix("data: ") { data = String(line.dropFirst(6)) }
                }
                if let id { onEvent(id, data) }
            }
        }
    }
}

func find(_ data: [UInt8], _ pattern: [UInt8]) -> Int? {
    guard data.count >= pattern.count else { return nil }
    var i = 0
    while i <= data.count - pattern.count {
        if data[i] == pattern[0] && Array(data[i..<i + pattern.count]) == pattern { return i }
        i += 1
    }
    return nil
}
