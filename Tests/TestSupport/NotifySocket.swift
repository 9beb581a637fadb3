import Foundation

/// A datagram socket standing in for systemd's `NOTIFY_SOCKET`: what the daemon sends with
/// sd_notify arrives here, each message with the time it arrived.
public final class NotifySocket: @unchecked Sendable {
    public let path: String
    private let fd: Int32

    public init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in path.utf8.enumerated() { raw[i] = b }
        }
        let ok = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard ok == 0 else { throw TestFailure("bind \(path): \(String(cString: strerror(errno)))") }
    }

    deinit { close(fd) }

    /// The next message, or nil after `timeout` seconds.
    public func receive(timeout: Double) -> (text: String, at: Date)? {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, Int32(timeout * 1000)) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buffer, buffer.count, 0)
        guard n > 0 else { return nil }
        return (String(decoding: buffer[0..<n], as: UTF8.self), Date())
    }

    /// Messages until one satisfies `match` (returned last), failing after `timeout` seconds.
    public func until(_ what: String, timeout: Double = 10, _ match: (String) -> Bool) throws -> [(
        text: String, at: Date
    )] {
        var seen: [(text: String, at: Date)] = []
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard let m = receive(timeout: max(0.01, deadline.timeIntervalSinceNow)) else { break }
            seen.append(m)
            if match(m.text) { return seen }
        }
        throw TestFailure("no \(what) within \(timeout) s; got \(seen.map(\.text))")
    }

    /// Everything that arrives within `seconds`.
    public func collect(for seconds: Double) -> [(text: String, at: Date)] {
        var seen: [(text: String, at: Date)] = []
        let deadline = Date().addingTimeInterval(seconds)
        while let m = receive(timeout: max(0, deadline.timeIntervalSinceNow)) { seen.append(m) }
        return seen
    }
}
