#if canImport(Glibc)
    import Glibc
#endif

/// One client connection, owned by the server's thread: bytes in, requests out, responses
/// queued for writing without ever blocking the thread.
final class HTTPConnection {
    enum State {
        case head
        case body(HTTPRequestParser.Head, Body)
        /// A stream is open; input is ignored until the client closes.
        case streaming(StreamID)
        /// A handler answers later (`HTTPReply.later`); input waits unread until it has.
        case waiting(LaterID, keepAlive: Bool, method: String)
        /// An error response is queued; the connection closes once it is written.
        case closing
    }

    /// How the body being read is framed.
    enum Body {
        case length(Int)
        case chunked(ChunkedDecoder)
    }

    let fd: Int32
    let peer: PeerCredentials
    /// A TCP client's address (no port): its connections are counted together.
    var address: String?
    var state = State.head
    private(set) var input: [UInt8] = []
    private var output: [UInt8] = []
    private var outputStart = 0
    var sentContinue = false
    /// How far the head has been searched for its end (`HTTPRequestParser.headEnd`).
    var headSearched = 0
    /// After an error response: when to give up waiting for the client to finish sending.
    var lingerUntil: Int64?
    /// When the request being read began (its first byte), for the request timeout; nil
    /// between requests.
    var requestStarted: Int64?
    /// When the connection last finished a request or was opened, for the idle timeout.
    var idleSince: Int64
    /// Bytes of this connection's input counted against the server's shared body budget.
    var budgeted = 0
    /// Not read while the shared body budget is spent (its bytes wait in the kernel).
    var paused = false
    /// The client has finished sending (or gone): what is owed is written, then it closes.
    var peerDone = false

    /// The server's count of output queued on all its connections.
    let tally: OutputTally

    init(fd: Int32, peer: PeerCredentials, now: Int64, tally: OutputTally = OutputTally()) {
        self.fd = fd
        self.peer = peer
        self.tally = tally
        idleSince = now
    }

    var pendingOutput: Int { output.count - outputStart }

    /// Bytes held for the request being read: its input and what a chunked body decoded.
    var buffered: Int {
        if case let .body(_, .chunked(decoder)) = state { return input.count + decoder.body.count }
        return input.count
    }

    /// What one `recv` brought: how many bytes, and whether the peer is still there.
    struct Received {
        var count: Int
        var open: Bool
    }

    /// Reads at most `limit` bytes of what the socket has.
    func read(limit: Int) -> Received {
        guard limit > 0 else { return Received(count: 0, open: true) }
        var chunk = [UInt8](repeating: 0, count: min(limit, 65536))
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                input += chunk[0..<n]
                return Received(count: n, open: true)
            }
            if n == 0 { return Received(count: 0, open: false) }
            if errno == EINTR { continue }
            return Received(count: 0, open: errno == EAGAIN || errno == EWOULDBLOCK)
        }
    }

    func consumeInput(_ count: Int) {
        input.removeFirst(count)
        headSearched = 0
        if input.isEmpty { input = [] }
    }

    func discardInput() {
        input = []
        headSearched = 0
    }

    /// Moves the input into a chunked body's decoder (the decoder keeps what it used).
    func feedChunked(_ decoder: inout ChunkedDecoder) throws(HTTPRequestParser.Failure) {
        let used = try decoder.feed(input[...])
        if used > 0 { consumeInput(used) }
    }

    func queue(_ bytes: [UInt8]) {
        output += bytes
        tally.bytes += bytes.count
    }

    /// Writes as much as the socket takes; false when the socket failed.
    func flush() -> Bool {
        while outputStart < output.count {
            let n = output.withUnsafeBytes {
                send(fd, $0.baseAddress! + outputStart, output.count - outputStart, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                outputStart += n
                tally.bytes -= n
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                break
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        if outputStart == output.count {
            output = []
            outputStart = 0
        } else if outputStart > 1 << 16 && outputStart > output.count / 2 {
            output.removeFirst(outputStart)
            outputStart = 0
        }
        return true
    }
}

/// Bytes of answers queued on a server's connections and not yet taken by their clients: one
/// count for all of them, kept on the server's thread (`HTTPServer.Settings.maxQueuedOutputBytes`).
final class OutputTally {
    var bytes = 0
}
