#if canImport(Glibc)
    import Glibc
#endif

/// One daemon per state directory. Two daemons given the same `gateway.state_dir` (two units,
/// a copy started by hand with another socket) would each take the other's events for their
/// own, deliver both outboxes twice and restore each other's states; the second is refused,
/// as a second daemon on the same socket is. The lock is `flock` on `beacond.lock` in the
/// directory, held for the life of the process (the kernel lets go of it however the
/// process ends, `kill -9` included), and the file names the holder's pid for the message.
public enum StateDirectoryLock {
    public enum Outcome: Equatable, Sendable {
        /// This process holds it.
        case held
        /// Another process does (its pid, when the file says).
        case heldByAnother(pid: Int32?)
        /// The directory cannot be written (read-only, or not there): the store waits for it
        /// anyway, and the daemon runs unlocked, saying so.
        case unavailable(String)
    }

    public static func acquire(directory: String) -> Outcome {
        let path = directory.hasSuffix("/") ? directory + "beacond.lock" : directory + "/beacond.lock"
        // As the store makes it (`mkdir -p`) when it opens, just before.
        try? StateStore.makeDirectories(directory)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else { return .unavailable(String(cString: strerror(errno))) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            var buffer = [UInt8](repeating: 0, count: 32)
            let n = read(fd, &buffer, buffer.count)
            close(fd)
            guard busy else { return .unavailable(String(cString: strerror(errno))) }
            let text = String(decoding: buffer.prefix(max(0, n)), as: UTF8.self)
            return .heldByAnother(pid: Int32(text.split(separator: "\n").first ?? ""))
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        // Kept open, and so locked, until the process ends.
        return .held
    }
}
