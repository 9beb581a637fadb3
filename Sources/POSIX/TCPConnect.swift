import Glibc

/// A TCP connection opened without blocking the thread that opens it: one thread polls many
/// (ESPHome proxies, each a connection of its own) and a proxy that does not answer holds up
/// none of the others.
public enum TCPConnect {
    /// Resolves `host` and starts connecting to its first address; the socket is non-blocking
    /// and close-on-exec. Returns it (connected or in progress: poll it for POLLOUT, then
    /// `finish`), or why it could not start. A name is resolved here, on the caller's thread.
    public static func start(host: String, port: Int) -> Result<Int32, ConnectFailure> {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let first = list else {
            return .failure(ConnectFailure("\(host) does not resolve: \(String(cString: gai_strerror(resolved)))"))
        }
        defer { freeaddrinfo(first) }
        let info = first.pointee
        let type = info.ai_socktype | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = socket(info.ai_family, type, info.ai_protocol)
        guard fd >= 0 else { return .failure(ConnectFailure(String(cString: strerror(errno)))) }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        if connect(fd, info.ai_addr, info.ai_addrlen) == 0 || errno == EINPROGRESS { return .success(fd) }
        let why = String(cString: strerror(errno))
        close(fd)
        return .failure(ConnectFailure(why))
    }

    /// Once a connecting socket polls writable: nil when it connected, else why not.
    public static func finish(_ fd: Int32) -> ConnectFailure? {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        return error == 0 ? nil : ConnectFailure(String(cString: strerror(error)))
    }

    public struct ConnectFailure: Error, Sendable, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }
}
