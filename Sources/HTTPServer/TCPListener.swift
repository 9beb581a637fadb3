#if canImport(Glibc)
    import Glibc
#endif

/// The read-only listener's TCP socket (`http.listen`): for what cannot reach a Unix socket,
/// a Prometheus on another machine, a browser on the floor view.
enum TCPListener {
    /// Binds and listens on `host:port` (a name, an IPv4 address or an IPv6 one); returns
    /// the non-blocking socket.
    static func listen(host: String, port: Int) throws(UnixListener.Failure) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let info = list?.pointee else {
            throw UnixListener.Failure(
                description: "\(host):\(port): does not resolve: \(String(cString: gai_strerror(resolved)))")
        }
        defer { freeaddrinfo(list) }
        let fd = socket(info.ai_family, info.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), info.ai_protocol)
        guard fd >= 0 else { throw UnixListener.Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, info.ai_addr, info.ai_addrlen) == 0, Glibc.listen(fd, 512) == 0 else {
            let text = String(cString: strerror(errno))
            close(fd)
            throw UnixListener.Failure(description: "\(host):\(port): \(text)")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return fd
    }

    /// The port a listener was given (0 in `listen` asks the kernel for a free one).
    static func port(of fd: Int32) -> Int {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let got = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard got == 0 else { return 0 }
        let family = address.ss_family
        return withUnsafePointer(to: &address) { pointer in
            if family == sa_family_t(AF_INET6) {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin6_port))
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                Int(UInt16(bigEndian: $0.pointee.sin_port))
            }
        }
    }
}

extension PeerCredentials {
    /// A client over TCP: no kernel credentials, never root, never an admin, and one "user"
    /// for the per-user connection limit.
    static let network = PeerCredentials(pid: 0, uid: UInt32.max - 1, gid: UInt32.max - 1)
}
