import Foundation
import Synchronization

/// A name server that reads every query and answers none: a DNS server gone quiet, as a
/// resolver meets it (each lookup waits its whole timeout). UDP on port 53 of a loopback
/// address of its own, so it needs root.
public final class SilentNameServer: @unchecked Sendable {
    public let address = "127.0.0.61"
    private let fd: Int32
    private let tally = Tally()

    private final class Tally: Sendable {
        let count = Atomic<Int>(0)
    }

    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        var sin = sockaddr_in()
        sin.sin_family = sa_family_t(AF_INET)
        sin.sin_port = UInt16(53).bigEndian
        sin.sin_addr.s_addr = inet_addr(address)
        let bound = withUnsafePointer(to: &sin) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            close(fd)
            throw TestFailure("cannot listen on \(address):53: \(String(cString: strerror(errno)))")
        }
        self.fd = fd
        let tally = tally
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while buffer.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, 0) }) > 0 {
                tally.count.add(1, ordering: .relaxed)
            }
        }
    }

    /// Queries read so far.
    public var queries: Int { tally.count.load(ordering: .relaxed) }

    deinit { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
}
