import BeaconCore
import CLinux
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
/// Handlers run on the server's thread and must answer promptly (they read state); one that
/// waits on the network answers `HTTPReply.later` and finishes on a thread of its own, so that
/// a receiver taking its time holds up only its own client. Streams are written from any
/// thread with `send(_:to:)`.
public final class HTTPServer: @unchecked Sendable {
    public struct Settings: Sendable {
        public var socketPath: String
        public var socketMode: mode_t = 0o660
        /// Request bodies over this get 413 (SPEC §4.1: 1 MiB).
        public var maxBodyBytes = 1 << 20
        /// A stream with more unsent output than this is dropped.
        public var streamBufferLimit = 4 << 20
        /// How often `onTick` runs (heartbeats).
        public var tickInterval: Int32 = 1000

        public init(socketPath: String) { self.socketPath = socketPath }
    }

    public let settings: Settings
    private let handler: @Sendable (HTTPRequest) -> HTTPReply
    /// Called on the server's thread when a stream closes for any reason.
    public var onStreamClosed: (@Sendable (StreamID) -> Void)?
    /// Called on the server's thread about every `tickInterval` ms.
    public var onTick: (@Sendable () -> Void)?
    /// Written from the server's thread only; read anywhere for status and metrics.
    public let requestsServed = Atomic<Int>(0)
    public let streamsDropped = Atomic<Int>(0)
    public let openStreams = Atomic<Int>(0)

    static let lingerMillis: Int64 = 2000
    private var listener: Int32 = -1
    private var epoll: Int32 = -1
    private var wakeFD: Int32 = -1
    private var connections: [Int32: HTTPConnection] = [:]
    private var streams: [Int: Int32] = [:]
    private var nextStream = 1
    /// Connections waiting for a `later` answer, by its id.
    private var waiting: [Int: Int32] = [:]
    private var nextLater = 1
    private let answers = Mutex<[(LaterID, HTTPResponse)]>([])
    private let outbound = Mutex<[(StreamID, [UInt8]?)]>([])
    private let stopRequested = Atomic<Bool>(false)

    public init(settings: Settings, handler: @escaping @Sendable (HTTPRequest) -> HTTPReply) {
        self.settings = settings
        self.handler = handler
    }

    /// Binds the socket (replacing a stale one). After this returns, clients can connect.
    public func start() throws {
        listener = try UnixListener.listen(path: settings.socketPath, mode: settings.socketMode)
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
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
                for (fd, c) in connections where (c.lingerUntil ?? .max) < now { drop(fd) }
                onTick?()
                deliverOutbound()
            }
        }
        for fd in Array(connections.keys) { drop(fd) }
        Glibc.close(listener)
        Glibc.close(epoll)
        Glibc.close(wakeFD)
        unlink(settings.socketPath)
    }

    public func stop() {
        stopRequested.store(true, ordering: .relaxed)
        wake()
    }

    /// Queues bytes for a stream (any thread). Unknown or closed streams are ignored.
    public func send(_ bytes: [UInt8], to stream: StreamID) {
        outbound.withLock { $0.append((stream, bytes)) }
        wake()
    }

    /// Queues the same bytes for several streams (any thread).
    public func send(_ bytes: [UInt8], to streams: [StreamID]) {
        guard !streams.isEmpty else { return }
        outbound.withLock { queue in for s in streams { queue.append((s, bytes)) } }
        wake()
    }

    /// Closes a stream once what was queued before has been written (any thread).
    public func close(_ stream: StreamID) {
        outbound.withLock { $0.append((stream, nil)) }
        wake()
    }

    // MARK: - The loop

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    private func watch(_ fd: Int32, events: UInt32, modify: Bool = false) {
        var event = epoll_event()
        event.events = events
        event.data.fd = fd
        epoll_ctl(epoll, modify ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &event)
    }

    private func acceptAll() {
        while true {
            let fd = clinux_accept_nonblocking(listener)
            guard fd >= 0 else { return }
            guard let peer = PeerCredentials.of(socket: fd) else {
                Glibc.close(fd)
                continue
            }
            connections[fd] = HTTPConnection(fd: fd, peer: peer)
            watch(fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue)
        }
    }

    private func service(_ connection: HTTPConnection, flags: UInt32) {
        if flags & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
            return drop(connection.fd)
        }
        if flags & EPOLLIN.rawValue != 0 || flags & EPOLLRDHUP.rawValue != 0 {
            let open = connection.readAvailable()
            switch connection.state {
            case .streaming, .closing:
                connection.discardInput()
            case .waiting:
                break
            default:
                process(connection)
            }
            if case .waiting = connection.state {
                // The answer is still owed, even to a client that has finished sending.
            } else if !open && connection.pendingOutput == 0 {
                return drop(connection.fd)
            }
            if !open, case .streaming = connection.state { return drop(connection.fd) }
        }
        finishWrite(connection)
    }

    /// Parses and answers every complete request in the input, in order.
    private func process(_ c: HTTPConnection) {
        while true {
            do {
                switch c.state {
                case .head:
                    guard case let .done(head, consumed) = try HTTPRequestParser.head(c.input[...]) else { return }
                    if let length = head.contentLength, length > settings.maxBodyBytes {
                        throw HTTPRequestParser.Failure(
                            status: 413, message: "request body of \(length) bytes is over the 1 MiB limit")
                    }
                    c.state = .body(head, consumedHead: consumed)
                    c.sentContinue = false
                case let .body(head, consumedHead):
                    let rest = c.input[consumedHead...]
                    let body: [UInt8]
                    let used: Int
                    if head.chunked {
                        guard
                            case let .done(b, n) = try HTTPRequestParser.chunkedBody(rest, limit: settings.maxBodyBytes)
                        else { return continueIfAsked(c, head) }
                        (body, used) = (b, n)
                    } else {
                        let length = head.contentLength ?? 0
                        guard rest.count >= length else { return continueIfAsked(c, head) }
                        (body, used) = (Array(rest.prefix(length)), length)
                    }
                    c.consumeInput(consumedHead + used)
                    c.state = .head
                    respond(c, head: head, body: body)
                    if case .head = c.state {} else { return }
                case .streaming, .closing, .waiting:
                    return
                }
            } catch let error as HTTPRequestParser.Failure {
                let code =
                    switch error.status {
                    case 413: "payload_too_large"
                    case 431: "header_too_large"
                    case 501: "not_implemented"
                    default: "bad_request"
                    }
                let response = HTTPResponse.error(status: error.status, code: code, message: error.message)
                c.queue(response.head(keepAlive: false))
                c.queue(response.body)
                c.state = .closing
                c.discardInput()
                return
            } catch {
                return
            }
        }
    }

    private func continueIfAsked(_ c: HTTPConnection, _ head: HTTPRequestParser.Head) {
        if head.expectContinue && !c.sentContinue {
            c.sentContinue = true
            c.queue(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
        }
    }

    private func respond(_ c: HTTPConnection, head: HTTPRequestParser.Head, body: [UInt8]) {
        let request = HTTPRequest(head: head, body: body, peer: c.peer)
        requestsServed.add(1, ordering: .relaxed)
        switch handler(request) {
        case let .response(response):
            c.queue(response.head(keepAlive: head.keepAlive))
            if head.method != "HEAD" { c.queue(response.body) }
            if !head.keepAlive { c.state = .closing }
        case let .stream(response, opened):
            let id = StreamID(raw: nextStream)
            nextStream += 1
            streams[id.raw] = c.fd
            c.state = .streaming(id)
            c.discardInput()
            openStreams.add(1, ordering: .relaxed)
            c.queue(response.head(keepAlive: false, streaming: true))
            opened(id)
        case let .later(start):
            let id = LaterID(raw: nextLater)
            nextLater += 1
            waiting[id.raw] = c.fd
            c.state = .waiting(id, keepAlive: head.keepAlive, method: head.method)
            start { [weak self] response in
                guard let self else { return }
                self.answers.withLock { $0.append((id, response)) }
                self.wake()
            }
        }
    }

    /// Writes the `later` answers that have come, and goes on with each connection's next
    /// requests. An answer for a connection that has closed meanwhile is dropped.
    private func deliverAnswers() {
        let done = answers.withLock { list -> [(LaterID, HTTPResponse)] in
            defer { list.removeAll() }
            return list
        }
        for (id, response) in done {
            guard let fd = waiting.removeValue(forKey: id.raw), let c = connections[fd],
                case let .waiting(owed, keepAlive, method) = c.state, owed == id
            else { continue }
            c.queue(response.head(keepAlive: keepAlive))
            if method != "HEAD" { c.queue(response.body) }
            c.state = keepAlive ? .head : .closing
            process(c)
            finishWrite(c)
        }
    }

    private func finishWrite(_ c: HTTPConnection) {
        guard c.flush() else { return drop(c.fd) }
        if c.pendingOutput == 0, case .closing = c.state, c.lingerUntil == nil {
            // A lingering close: the client may still be sending the body we refused; read
            // and drop it so that it sees our answer rather than a reset (EPIPE).
            shutdown(c.fd, Int32(SHUT_WR))
            c.lingerUntil = monotonicMillis() + HTTPServer.lingerMillis
        }
        let wantWrite = c.pendingOutput > 0
        // While an answer is owed, input stays in the kernel (the client's next requests wait
        // there); a client that goes away is still seen (EPOLLHUP is always reported).
        var wantRead = true
        if case .waiting = c.state { wantRead = false }
        let events = (wantRead ? EPOLLIN.rawValue | EPOLLRDHUP.rawValue : 0) | (wantWrite ? EPOLLOUT.rawValue : 0)
        watch(c.fd, events: events, modify: true)
    }

    private func deliverOutbound() {
        deliverAnswers()
        let items = outbound.withLock { queue -> [(StreamID, [UInt8]?)] in
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        guard !items.isEmpty else { return }
        var touched: Set<Int32> = []
        for (stream, bytes) in items {
            guard let fd = streams[stream.raw], let c = connections[fd] else { continue }
            guard let bytes else {
                c.state = .closing
                touched.insert(fd)
                continue
            }
            if case .closing = c.state { continue }
            c.queue(bytes)
            if c.pendingOutput > settings.streamBufferLimit {
                streamsDropped.add(1, ordering: .relaxed)
                drop(fd)
                continue
            }
            touched.insert(fd)
        }
        for fd in touched {
            if let c = connections[fd] { finishWrite(c) }
        }
    }

    private func drop(_ fd: Int32) {
        guard let c = connections.removeValue(forKey: fd) else { return }
        epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nil)
        Glibc.close(fd)
        if case let .waiting(id, _, _) = c.state { waiting[id.raw] = nil }
        if case let .streaming(id) = c.state {
            streams[id.raw] = nil
            openStreams.subtract(1, ordering: .relaxed)
            onStreamClosed?(id)
        } else {
            for (raw, streamFD) in streams where streamFD == fd {
                streams[raw] = nil
                openStreams.subtract(1, ordering: .relaxed)
                onStreamClosed?(StreamID(raw: raw))
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

func monotonicMillis() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
}
