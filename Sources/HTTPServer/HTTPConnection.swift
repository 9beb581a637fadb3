#if canImport(Glibc)
    import Glibc
#endif

/// One client connection, owned by the server's thread: bytes in, requests out, responses
/// queued for writing without ever blocking the thread.
final class HTTPConnection {
    enum State {
        case head
        case body(HTTPRequestParser.Head, consumedHead: Int)
        /// A stream is open; input is ignored until the client closes.
        case streaming(StreamID)
        /// A handler answers later (`HTTPReply.later`); input waits unread until it has.
        case waiting(LaterID, keepAlive: Bool, method: String)
        /// An error response is queued; the connection closes once it is written.
        case closing
    }

    let fd: Int32
    let peer: PeerCredentials
    var state = State.head
    private(set) var input: [UInt8] = []
    private var output: [UInt8] = []
    private var outputStart = 0
    var sentContinue = false
    /// After an error response: when to give up waiting for the client to finish sending.
    var lingerUntil: Int64?

    init(fd: Int32, peer: PeerCredentials) {
        self.fd = fd
        self.peer = peer
    }

    var pendingOutput: Int { output.count - outputStart }

    /// Reads what the socket has; false when the peer closed or the socket failed.
    func readAvailable() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                input += chunk[0..<n]
                if n < chunk.count { return true }
            } else if n == 0 {
                return false
            } else {
                return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR
            }
        }
    }

    func consumeInput(_ count: Int) {
        input.removeFirst(count)
    }

    func discardInput() { input.removeAll(keepingCapacity: false) }

    func queue(_ bytes: [UInt8]) {
        output += bytes
    }

    /// Writes as much as the socket takes; false when the socket failed.
    func flush() -> Bool {
        while outputStart < output.count {
            let n = output.withUnsafeBytes {
                send(fd, $0.baseAddress! + outputStart, output.count - outputStart, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                outputStart += n
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                break
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        if outputStart == output.count {
            output.removeAll(keepingCapacity: output.count < 1 << 20)
            outputStart = 0
        } else if outputStart > 1 << 16 && outputStart > output.count / 2 {
            output.removeFirst(outputStart)
            outputStart = 0
        }
        return true
    }
}
