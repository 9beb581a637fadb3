import Glibc

/// Whether a webhook's host answers a TCP connection from this gateway: its name resolves and
/// something accepts on its port. Nothing is sent, so a CRM gets no stray request from a check.
///
/// Why: a webhook that has had no event yet (a quiet site, a new install) looks healthy to
/// every other check, and its first alert would be the first to find a wrong host name, a
/// closed port or a firewall; `beaconctl doctor` is where an operator looks before that. The
/// daemon runs it too (`GET /v1/reachability`), because only a connection made from inside
/// its unit's sandbox (`IPAddressDeny=`, a network namespace) says what the daemon can reach.
public enum Reachability {
    /// `host:port` of an `http://` or `https://` URL (80 or 443 unless given; IPv6 in brackets).
    public static func endpoint(of url: String) -> (host: String, port: String)? {
        let scheme: (prefix: String, port: String)
        if url.hasPrefix("https://") {
            scheme = ("https://", "443")
        } else if url.hasPrefix("http://") {
            scheme = ("http://", "80")
        } else {
            return nil
        }
        var authority = url.dropFirst(scheme.prefix.count).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            let host = String(authority[authority.index(after: authority.startIndex)..<close])
            let rest = authority[authority.index(after: close)...]
            return (host, rest.hasPrefix(":") ? String(rest.dropFirst()) : scheme.port)
        }
        let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let host = parts.first, !host.isEmpty else { return nil }
        return (String(host), parts.count > 1 ? String(parts[1]) : scheme.port)
    }

    /// Connects to each address the host resolves to until one accepts; nil when one does,
    /// else why none did (the last address's reason).
    public static func failure(host: String, port: String, timeoutMs: Int32 = 3_000) -> String? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, port, &hints, &list)
        guard resolved == 0, let first = list else {
            return "\(host) does not resolve: \(String(cString: gai_strerror(resolved)))"
        }
        defer { freeaddrinfo(first) }
        var reason = "no address"
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next {
            next = info.pointee.ai_next
            switch connect(to: info.pointee, timeoutMs: timeoutMs) {
            case nil: return nil
            case let why?: reason = why
            }
        }
        return "\(host):\(port): \(reason)"
    }

    private static func connect(to info: addrinfo, timeoutMs: Int32) -> String? {
        let fd = socket(info.ai_family, info.ai_socktype | Int32(SOCK_NONBLOCK.rawValue), info.ai_protocol)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        defer { close(fd) }
        if Glibc.connect(fd, info.ai_addr, info.ai_addrlen) == 0 { return nil }
        guard errno == EINPROGRESS else { return String(cString: strerror(errno)) }
        var poll = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        guard Glibc.poll(&poll, 1, timeoutMs) == 1 else { return "no answer within \(timeoutMs / 1000) s" }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        return error == 0 ? nil : String(cString: strerror(error))
    }
}
