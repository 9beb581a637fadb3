import BeaconCore
import CLinux
import Logging
import POSIX
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// HTTP/1.1 on a Unix socket, on one thread with epoll: the API's transport.
///
/// Why not a framework: the API serves a few dozen requests a minute and holds long-lived
/// event streams. One thread and non-blocking sockets keep idle memory at a few hundred
/// kilobytes, read the peer's credentials straight from the socket for the admin check, and
/// make the slow-client rule simple and exact: a stream whose unsent output passes
/// `streamBufferLimit` is closed, so a client that stops reading costs a bounded amount of
/// memory and never stalls the daemon.
///
/// Anyone who may open the socket may also try to take it down, so every resource a client
/// can make the server hold has a limit (`Settings`): connections in all and per user, with
/// a few kept for root; the time a request may take to arrive and a connection may sit idle;
/// the bytes of request bodies held at once, past which the server stops reading the senders
/// (their bytes wait in the kernel); every part of a request's framing; and the answers a
/// client leaves unread. When the process runs out of descriptors anyway, a spare one
/// accepts and closes the next connection rather than letting it spin the loop. Each refusal
/// is counted by reason (`refusals`) and logged, at most once a minute per reason.
///
/// Handlers run on the server's thread and must answer promptly (they read state); one that
/// waits on the network answers `HTTPReply.later` and finishes on a thread of its own, so that
/// a receiver taking its time holds up only its own client. Streams are written from any
/// thread with `send(_:to:)`.
/// `@unchecked Sendable`: the epoll loop's state (connections, descriptors, budgets) is the
/// server thread's alone; other threads reach it only through `send` and `later`, which queue
/// under a lock and wake the loop.
public final class HTTPServer: @unchecked Sendable {
    public struct Settings: Sendable {
        public var socketPath: String
        public var socketMode: mode_t = 0o660
        /// Listen on TCP instead (the read-only listener, `http.listen`): clients have no
        /// kernel credentials (`PeerCredentials.network`) and `socketPath` only names it.
        public var tcp: (host: String, port: Int)?
        /// Request bodies over this get 413 (SPEC §4.1: 1 MiB).
        public var maxBodyBytes = 1 << 20
        /// A stream with more unsent output than this is dropped.
        public var streamBufferLimit = 4 << 20
        /// How often `onTick` runs (heartbeats) and timeouts are checked.
        public var tickInterval: Int32 = 1000
        /// Connections open at once from users other than root; past it, new ones get 503.
        public var maxConnections = 3072
        /// Connections open at once from one user other than root.
        public var maxConnectionsPerUser = 256
        /// TCP: connections open at once from one address. With 1,024 in all, sixteen
        /// addresses' worth: one client (or one NAT) cannot take the listener.
        public var maxConnectionsPerAddress = 64
        /// Kept for root beyond `maxConnections`, so an operator can look while it is full.
        public var rootReserve = 32
        /// A connection with no request under way is closed after this long (streams and
        /// answers owed excepted).
        public var idleTimeout = TimeSpan.seconds(60)
        /// A request must have arrived whole this long after its first byte, or gets 408.
        public var requestTimeout = TimeSpan.seconds(30)
        /// Bytes of request bodies held at once across all connections, beyond the first
        /// 16 KiB of each; past it, senders are not read until others finish.
        public var bodyBudgetBytes = 16 << 20
        /// A client's pipelined requests are not answered while this much of its earlier
        /// answers is unread.
        public var maxUnreadAnswerBytes = 1 << 20
        /// Bytes of answers and stream output queued on all connections and not yet read by
        /// their clients. Past it, an answer of more than 64 KiB gets 503 instead, and the
        /// stream with the most unread output is closed: a hundred clients that ask for a
        /// 12 MiB floor plan and never read it, or two hundred streams that stopped reading,
        /// cost this much, not a gigabyte.
        public var maxQueuedOutputBytes = 64 << 20
        /// A stream that asked (`notifyWhenDrained`) is told once its unsent output is this low.
        public var drainedBytes = 64 * 1024

        public init(socketPath: String) { self.socketPath = socketPath }

        /// A TCP listener on `host:port`, with limits for clients that are all one "user".
        public init(tcpHost host: String, port: Int, maxConnections: Int = 1024) {
            socketPath = "\(host):\(port)"
            tcp = (host, port)
            self.maxConnections = maxConnections
            maxConnectionsPerUser = maxConnections
            rootReserve = 0
        }

        /// Descriptors the connection limits need, for the unit's `LimitNOFILE`.
        public var descriptorsNeeded: Int { maxConnections + rootReserve + 256 }
    }

    public let settings: Settings
    let handler: @Sendable (HTTPRequest) -> HTTPReply
    /// What the server asks and tells its owner on its own thread, fixed at construction.
    public let hooks: Hooks
    /// Where refusals are logged (rate-limited: the first, then a count once a minute).
    public let logger: Logger?

    /// Written from the server's thread only; read anywhere for status and metrics.
    public let requestsServed = Atomic<Int>(0)
    public let streamsDropped = Atomic<Int>(0)
    public let openStreams = Atomic<Int>(0)
    public let openConnections = Atomic<Int>(0)
    /// The TCP port bound (the kernel's choice when asked for 0); 0 on a Unix socket.
    public let boundPort = Atomic<Int>(0)
    /// Bytes of request bodies held now against the shared budget.
    public let bufferedRequestBytes = Atomic<Int>(0)
    /// Senders not read now because the body budget is spent.
    public let pausedSenders = Atomic<Int>(0)
    let refused = Mutex(Refusals())

    static let linger = TimeSpan.seconds(2)
    /// Every connection may hold this much input outside the shared body budget, so that a
    /// spent budget never holds up a small request such as a status read.
    static let unbudgetedBytes = HTTPRequestParser.maxHeadBytes
    var listener: Int32 = -1
    private var epoll: Int32 = -1
    private var wakeFD: Int32 = -1
    /// Kept open to be closed when descriptors run out, to accept and close one connection.
    var spareFD: Int32 = -1
    var connections: [Int32: HTTPConnection] = [:]
    var perUser: [UInt32: Int] = [:]
    /// TCP: connections open per client address.
    var perAddress: [String: Int] = [:]
    /// Output queued on every connection and not yet sent (`maxQueuedOutputBytes`).
    let outputTally = OutputTally()
    /// The same, for tests (read on the server's thread only in production).
    var outputTallyBytes: Int { outputTally.bytes }
    var budgetUsed = 0
    /// Connections not read until the body budget has room.
    var paused: Set<Int32> = []
    /// The listener is not watched until the next tick (descriptors ran out, none spare).
    var listenerPaused = false
    var streams: [Int: Int32] = [:]
    var nextStream = 1
    var drainWatched: Set<Int> = []
    /// Connections waiting for a `later` answer, by its id.
    var waiting: [Int: Int32] = [:]
    var nextLater = 1
    let answers = Mutex<[(LaterID, HTTPResponse)]>([])
    private let outbound = Mutex<[Outbound]>([])
    private let stopRequested = Atomic<Bool>(false)

    enum Outbound {
        case bytes(StreamID, [UInt8])
        case close(StreamID)
        case notifyWhenDrained(StreamID)
    }

    public init(
        settings: Settings, hooks: Hooks = Hooks(), logger: Logger? = nil,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPReply
    ) {
        self.settings = settings
        self.hooks = hooks
        self.logger = logger
        self.handler = handler
    }

    /// Binds the socket (replacing a stale one). After this returns, clients can connect.
    public func start() throws {
        if let tcp = settings.tcp {
            listener = try TCPListener.listen(host: tcp.host, port: tcp.port)
            boundPort.store(TCPListener.port(of: listener), ordering: .relaxed)
        } else {
            listener = try UnixListener.listen(path: settings.socketPath, mode: settings.socketMode)
        }
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        spareFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
        guard epoll >= 0, wakeFD >= 0 else {
            let reason = String(cString: strerror(errno))
            for fd in [listener, epoll, wakeFD, spareFD] where fd >= 0 { Glibc.close(fd) }
            if settings.tcp == nil { unlink(settings.socketPath) }
            throw UnixListener.Failure(description: "epoll or eventfd: \(reason)")
        }
        watch(listener, events: EPOLLIN.rawValue)
        watch(wakeFD, events: EPOLLIN.rawValue)
    }

    /// Serves until `stop()`; then closes every connection and removes the socket file.
    public func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        var lastTick = monotonicMillis()
        while !stopRequested.load(ordering: .relaxed) {
            let n = epoll_wait(epoll, &events, Int32(events.count), settings.tickInterval)
            for i in 0..<max(0, Int(n)) {
                let fd = events[i].data.fd
                let flags = events[i].events
                if fd == listener {
                    acceptAll()
                } else if fd == wakeFD {
                    var value: UInt64 = 0
                    _ = read(wakeFD, &value, 8)
                } else if let connection = connections[fd] {
                    service(connection, flags: flags)
                }
            }
            deliverOutbound()
            let now = monotonicMillis()
            if now - lastTick >= Int64(settings.tickInterval) {
                lastTick = now
                enforceTimeouts(now: now)
                hooks.onTick?()
                deliverOutbound()
            }
        }
        for fd in Array(connections.keys) { drop(fd) }
        Glibc.close(listener)
        Glibc.close(epoll)
        Glibc.close(wakeFD)
        if spareFD >= 0 { Glibc.close(spareFD) }
        if settings.tcp == nil { unlink(settings.socketPath) }
    }

    public func stop() {
        stopRequested.store(true, ordering: .relaxed)
        wake()
    }

    /// Queues bytes for a stream (any thread). Unknown or closed streams are ignored.
    public func send(_ bytes: [UInt8], to stream: StreamID) {
        outbound.withLock { $0.append(.bytes(stream, bytes)) }
        wake()
    }

    /// Queues the same bytes for several streams (any thread).
    public func send(_ bytes: [UInt8], to streams: [StreamID]) {
        guard !streams.isEmpty else { return }
        outbound.withLock { queue in for s in streams { queue.append(.bytes(s, bytes)) } }
        wake()
    }

    /// Closes a stream once what was queued before has been written (any thread).
    public func close(_ stream: StreamID) {
        outbound.withLock { $0.append(.close(stream)) }
        wake()
    }

    /// Asks for one `onStreamDrained` call once what was queued before is mostly written
    /// (any thread): a backlog is sent a page at a time, as the client reads it.
    public func notifyWhenDrained(_ stream: StreamID) {
        outbound.withLock { $0.append(.notifyWhenDrained(stream)) }
        wake()
    }

    /// Requests and connections refused since start, by reason (`Refusals.Reason`).
    public var refusalCounts: [String: Int] { refused.withLock { $0.totals } }

    // MARK: - The loop

    func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    func watch(_ fd: Int32, events: UInt32, modify: Bool = false) {
        var event = epoll_event()
        event.events = events
        event.data.fd = fd
        epoll_ctl(epoll, modify ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &event)
    }

    func admitConnection(fd: Int32, peer: PeerCredentials, address: String? = nil) {
        let c = HTTPConnection(fd: fd, peer: peer, now: monotonicMillis(), tally: outputTally)
        c.address = address
        connections[fd] = c
        if let address { perAddress[address, default: 0] += 1 }
        perUser[peer.uid, default: 0] += 1
        openConnections.add(1, ordering: .relaxed)
        watch(fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue)
    }

    private func service(_ connection: HTTPConnection, flags: UInt32) {
        if flags & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
            return drop(connection.fd)
        }
        if flags & EPOLLIN.rawValue != 0 || flags & EPOLLRDHUP.rawValue != 0 {
            guard readAndProcess(connection) else { return drop(connection.fd) }
        } else if flags & EPOLLOUT.rawValue != 0 {
            guard connection.flush() else { return drop(connection.fd) }
            // Answers the client had left unread are written: go on with its next requests.
            if case .head = connection.state, !connection.input.isEmpty { process(connection) }
        }
        finishWrite(connection)
    }

    func finishWrite(_ c: HTTPConnection) {
        guard c.flush() else { return drop(c.fd) }
        if c.pendingOutput == 0, c.peerDone, case .closing = c.state { return drop(c.fd) }
        if c.pendingOutput == 0, case .closing = c.state, c.lingerUntil == nil {
            // A lingering close: the client may still be sending the body we refused; read
            // and drop it so that it sees our answer rather than a reset (EPIPE).
            shutdown(c.fd, Int32(SHUT_WR))
            c.lingerUntil = monotonicMillis() + HTTPServer.linger.nanoseconds / 1_000_000
        }
        if case let .streaming(id) = c.state, c.pendingOutput <= settings.drainedBytes,
            drainWatched.remove(id.raw) != nil
        {
            hooks.onStreamDrained?(id)
        }
        let wantWrite = c.pendingOutput > 0
        // While an answer is owed, input stays in the kernel (the client's next requests wait
        // there); a client that goes away is still seen (EPOLLHUP is always reported). So it
        // does while the body budget is spent, or while the client leaves answers unread.
        var wantRead = !c.paused && !c.peerDone && c.pendingOutput <= settings.maxUnreadAnswerBytes
        if case .waiting = c.state { wantRead = false }
        let events = (wantRead ? EPOLLIN.rawValue | EPOLLRDHUP.rawValue : 0) | (wantWrite ? EPOLLOUT.rawValue : 0)
        watch(c.fd, events: events, modify: true)
    }

    private func deliverOutbound() {
        deliverAnswers()
        let items = outbound.withLock { queue -> [Outbound] in
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        guard !items.isEmpty else { return }
        var touched: Set<Int32> = []
        for item in items {
            switch item {
            case let .bytes(stream, bytes):
                guard let fd = streams[stream.raw], let c = connections[fd] else { continue }
                if case .closing = c.state { continue }
                c.queue(bytes)
                if c.pendingOutput > settings.streamBufferLimit {
                    streamsDropped.add(1, ordering: .relaxed)
                    drop(fd)
                    continue
                }
                if outputTally.bytes > settings.maxQueuedOutputBytes, dropFullestStream() == fd { continue }
                touched.insert(fd)
            case let .close(stream):
                guard let fd = streams[stream.raw], let c = connections[fd] else { continue }
                c.state = .closing
                touched.insert(fd)
            case let .notifyWhenDrained(stream):
                guard let fd = streams[stream.raw] else { continue }
                drainWatched.insert(stream.raw)
                touched.insert(fd)
            }
        }
        for fd in touched {
            if let c = connections[fd] { finishWrite(c) }
        }
    }

    func drop(_ fd: Int32) {
        guard let c = connections.removeValue(forKey: fd) else { return }
        epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nil)
        Glibc.close(fd)
        openConnections.subtract(1, ordering: .relaxed)
        if let n = perUser[c.peer.uid] { perUser[c.peer.uid] = n > 1 ? n - 1 : nil }
        if let a = c.address, let n = perAddress[a] { perAddress[a] = n > 1 ? n - 1 : nil }
        outputTally.bytes -= c.pendingOutput
        release(c)
        if case let .waiting(id, _, _) = c.state { waiting[id.raw] = nil }
        if case let .streaming(id) = c.state {
            streams[id.raw] = nil
            drainWatched.remove(id.raw)
            openStreams.subtract(1, ordering: .relaxed)
            hooks.onStreamClosed?(id)
        } else {
            for (raw, streamFD) in streams where streamFD == fd {
                streams[raw] = nil
                drainWatched.remove(raw)
                openStreams.subtract(1, ordering: .relaxed)
                hooks.onStreamClosed?(StreamID(raw: raw))
            }
        }
    }
}

extension HTTPResponse {
    /// The API's error shape: `{"error": {"code": ..., "message": ...}}`.
    public static func error(status: Int, code: String, message: String) -> HTTPResponse {
        HTTPResponse(
            status: status, contentType: "application/json",
            body: JSONValue.object([("error", .object([("code", .string(code)), ("message", .string(message))]))])
                .serialized)
    }
}

/// Seconds on the monotonic clock (for intervals, never for event times).
public func monotonicSeconds() -> Double {
    Double(monotonicMillis()) / 1000
}

func monotonicMillis() -> Int64 { SystemClock.monotonicMillis }
