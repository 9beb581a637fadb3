#if canImport(Glibc)
    import Glibc
#endif

/// What this process has written to block devices (`/proc/self/io`'s `write_bytes`): for a
/// daemon whose only file writes are its state (the SQLite file, its write-ahead log and
/// their checkpoints; the journal takes the logs over a socket, `/run` is memory), the bytes
/// its flash card has had to take from it, before the card's own amplification.
public enum ProcessIO {
    /// Nil when the kernel does not keep the count (no task I/O accounting) or it cannot be read.
    public static func writtenBytes() -> Int? {
        guard let file = fopen("/proc/self/io", "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 128)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map(UInt8.init), as: UTF8.self)
            if text.hasPrefix("write_bytes: ") {
                return Int(text.dropFirst("write_bytes: ".count).prefix { $0 != "\n" })
            }
        }
        return nil
    }
}
