#if canImport(Glibc)
    import Glibc
#endif

/// The API's listening socket. A socket file left by a crashed daemon is replaced; one that
/// another running daemon answers on, or a path that is not a socket, is refused, so a
/// second copy never steals the first one's clients.
enum UnixListener {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Binds and listens on `path` with file mode `mode`; returns the non-blocking socket.
    static func listen(path: String, mode: mode_t) throws(Failure) -> Int32 {
        guard path.utf8.count < 108 else { throw Failure(description: "\(path): socket path over 107 bytes") }
        try replaceStale(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errnoText())") }
        var address = sockaddr_un(path)
        // bind creates the file with the socket's own mode less the umask: set that mode on
        // the socket first, so the file is never more open than `mode` (then exactly `mode`,
        // below). Not by changing the umask: it is the process's, and another thread creating
        // a directory in that moment got one without its search bit (a test process's
        // temporary directory became 0660, and every later test there could not reach it).
        guard fchmod(fd, mode) == 0 else {
            let text = errnoText()
            close(fd)
            throw Failure(description: "\(path): fchmod: \(text)")
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            let text = errnoText()
            close(fd)
            throw Failure(description: "\(path): bind: \(text)")
        }
        chmod(path, mode)
        guard Glibc.listen(fd, 512) == 0 else {
            let text = errnoText()
            close(fd)
            throw Failure(description: "\(path): listen: \(text)")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return fd
    }

    private static func replaceStale(_ path: String) throws(Failure) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            try makeParent(of: path)
            return
        }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            throw Failure(description: "\(path): exists and is not a socket; not replacing it")
        }
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(probe) }
        var address = sockaddr_un(path)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if connected == 0 { throw Failure(description: "\(path): another daemon is listening on it") }
        unlink(path)
    }

    private static func makeParent(of path: String) throws(Failure) {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        let parent = String(path[..<slash])
        var info = stat()
        if stat(parent, &info) == 0 { return }
        if mkdir(parent, 0o755) != 0 && errno != EEXIST {
            throw Failure(description: "\(parent): cannot create the socket's directory: \(errnoText())")
        }
    }
}

extension sockaddr_un {
    init(_ path: String) {
        self.init()
        sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &sun_path) { raw in
            for (i, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
        }
    }
}

func errnoText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}
