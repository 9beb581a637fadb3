import ArgumentParser
import BeaconConfig
import BeaconCore
import BeaconRuntime
import POSIX
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

func standardError(_ line: String) {
    var text = line
    text += "\n"
    writeAll(fd: 2, text)
}

/// Buffers standard output so a replay of millions of events is not one write per line.
struct OutputBuffer {
    private var pending = ""
    /// Standard output unless given.
    let fd: Int32

    init(fd: Int32 = 1) { self.fd = fd }

    mutating func write(_ line: String) {
        pending += line
        pending += "\n"
        if pending.utf8.count >= 64 * 1024 { flush() }
    }

    mutating func flush() {
        guard !pending.isEmpty else { return }
        writeAll(fd: fd, pending)
        pending = ""
    }
}
