import Glibc

/// A TCP connection opened without blocking the thread that opens it: one thread polls many
/// (ESPHome proxies, each a connection of its own) and a proxy that does not answer holds up
/// none of the others.
public enum TCPConnect {
    /// Starts connecting to `address` (`HostResolver`: a name is never resolved here, on the
    /// caller's thread); the socket is non-blocking and close-on-exec. Returns it (connected
    /// or in progress: poll it for POLLOUT, then `finish`), or why it could not start.
    public static func start(_ address: SocketAddress) -> Result<Int32, ConnectFailure> {
        let type = address.socketType | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = socket(address.family, type, address.socketProtocol)
        guard fd >= 0 else { return .failure(ConnectFailure(String(cString: strerror(errno)))) }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let started = address.bytes.withUnsafeBytes {
            connect(fd, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count))
        }
        if started == 0 || errno == EINPROGRESS { return .success(fd) }
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
