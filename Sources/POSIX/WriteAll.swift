#if canImport(Glibc)
    import Glibc
#endif

/// Writes all of `bytes` to a file descriptor — a file, a pipe or a socket — retrying short
/// writes and EINTR; false on any other failure (a closed pipe, a reset peer). Sockets are
/// written with `MSG_NOSIGNAL`, so a peer gone raises no SIGPIPE.
@discardableResult
public func writeAll(fd: Int32, _ bytes: [UInt8]) -> Bool {
    var offset = 0
    var isSocket = true
    while offset < bytes.count {
        var n = bytes[offset...].withUnsafeBytes { raw in
            isSocket ? send(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL)) : write(fd, raw.baseAddress, raw.count)
        }
        if n < 0 && errno == ENOTSOCK && isSocket {
            isSocket = false
            n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return false }
        offset += n
    }
    return true
}

/// The same for text.
@discardableResult
public func writeAll(fd: Int32, _ text: String) -> Bool {
    writeAll(fd: fd, Array(text.utf8))
}
