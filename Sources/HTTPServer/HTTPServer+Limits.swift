import BeaconCore
import CLinux
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What the server refuses, and the bounds it keeps on what clients make it hold.
extension HTTPServer {
    /// Takes every pending connection, refusing those over a limit with a 503 and, when the
    /// process is out of descriptors, shedding the next one with the spare descriptor: a
    /// listener left readable would otherwise wake the loop forever and serve no one.
    func acceptAll() {
        while true {
            let fd = clinux_accept_nonblocking(listener)
            if fd < 0 {
                if errno == EMFILE || errno == ENFILE {
                    if shedWithSpare() { continue }
                    // Not even that: stop listening until the next tick rather than spin.
                    watch(listener, events: 0, modify: true)
                    listenerPaused = true
                }
                return
            }
            guard let peer = settings.tcp == nil ? PeerCredentials.of(socket: fd) : .network else {
                Glibc.close(fd)
                continue
            }
            let address = settings.tcp == nil ? nil : Self.peerAddress(fd)
            // TCP: an address at its limit makes room from its own idle connections, else is
            // refused; the listener full, the longest idle of all makes room.
            if let address, (perAddress[address] ?? 0) >= settings.maxConnectionsPerAddress,
                !closeLongestIdle(of: address)
            {
                refuseConnection(
                    fd,
                    message:
                        "\(address) has \(settings.maxConnectionsPerAddress) connections open, the limit for one address"
                )
                note(.connectionsPerAddress, ["address": "\(address)", "open": "\(connections.count)"])
                continue
            }
            if address != nil, connections.count >= settings.maxConnections { closeLongestIdle() }
            if let (reason, message) = connectionRefusal(peer) {
                refuseConnection(fd, message: message)
                note(
                    reason,
                    ["uid": "\(peer.uid)", "open": "\(connections.count)", "from_uid": "\(perUser[peer.uid] ?? 0)"])
                continue
            }
            admitConnection(fd: fd, peer: peer, address: address)
        }
    }

    /// TCP, full (or one address at its limit): the connection idle longest (no request under
    /// way, nothing owed, no stream), of `address` when given, makes room for the newcomer.
    /// Clients that open connections and send nothing cannot keep out the one that comes with
    /// the token (a Prometheus scrape), even from the same address: they are the first to go.
    /// False when none is idle.
    @discardableResult
    private func closeLongestIdle(of address: String? = nil) -> Bool {
        let idle = connections.values.filter { c in
            guard address == nil || c.address == address, case .head = c.state, c.requestStarted == nil,
                c.pendingOutput == 0, c.lingerUntil == nil
            else { return false }
            return true
        }
        guard let oldest = idle.min(by: { $0.idleSince < $1.idleSince }) else { return false }
        note(.idleEvicted, ["address": "\(oldest.address ?? "?")", "open": "\(connections.count)"])
        drop(oldest.fd)
        return true
    }

    /// A TCP peer's address, without its port.
    static func peerAddress(_ fd: Int32) -> String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let got = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) == 0 }
        }
        guard got else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch Int32(storage.ss_family) {
        case AF_INET:
            var a = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
            }
            guard inet_ntop(AF_INET, &a.sin_addr, &text, socklen_t(text.count)) != nil else { return nil }
        case AF_INET6:
            var a = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }
            }
            guard inet_ntop(AF_INET6, &a.sin6_addr, &text, socklen_t(text.count)) != nil else { return nil }
        default:
            return nil
        }
        return String(cString: text)
    }

    private func connectionRefusal(_ peer: PeerCredentials) -> (Refusals.Reason, String)? {
        if peer.uid == 0 {
            guard connections.count >= settings.maxConnections + settings.rootReserve else { return nil }
            return (.connections, "the API has \(connections.count) connections open, its limit")
        }
        if connections.count >= settings.maxConnections {
            return (
                .connections, "the API has \(connections.count) connections open, its limit for users other than root"
            )
        }
        if (perUser[peer.uid] ?? 0) >= settings.maxConnectionsPerUser {
            return (
                .connectionsPerUser,
                "uid \(peer.uid) has \(settings.maxConnectionsPerUser) connections open, the limit for one user"
            )
        }
        return nil
    }

    /// Writes a 503 on a connection that was not admitted and closes it: the client learns
    /// why instead of hanging. The socket is new, so the short answer fits its buffer.
    private func refuseConnection(_ fd: Int32, message: String) {
        let response = HTTPResponse.error(status: 503, code: "too_many_connections", message: message)
        let bytes = response.head(keepAlive: false) + response.body
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        Glibc.close(fd)
    }

    private func shedWithSpare() -> Bool {
        guard spareFD >= 0 else { return false }
        Glibc.close(spareFD)
        spareFD = -1
        let fd = clinux_accept_nonblocking(listener)
        if fd >= 0 {
            refuseConnection(fd, message: "the daemon is out of file descriptors")
            note(.descriptors, ["open": "\(connections.count)"])
        }
        spareFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
        return fd >= 0 && spareFD >= 0
    }

    /// Closes connections idle too long, answers 408 to requests that have not arrived whole
    /// in time, ends lingering closes, and listens again if descriptors had run out.
    func enforceTimeouts(now: Int64) {
        for metadata in refused.withLock({ $0.overdue(now: now) }) {
            logger?.warning("api.refused", metadata: metadata)
        }
        if listenerPaused {
            listenerPaused = false
            watch(listener, events: EPOLLIN.rawValue, modify: true)
        }
        for (fd, c) in connections {
            if let until = c.lingerUntil {
                if until < now { drop(fd) }
                continue
            }
            switch c.state {
            case .streaming, .waiting, .closing:
                continue
            case .head, .body:
                if let started = c.requestStarted, now - started > settings.requestTimeout.nanoseconds / 1_000_000 {
                    fail(
                        c, status: 408,
                        message: "the request did not arrive whole within \(settings.requestTimeout)",
                        reason: .requestTimeout)
                    finishWrite(c)
                } else if c.requestStarted == nil, now - c.idleSince > settings.idleTimeout.nanoseconds / 1_000_000 {
                    refused.withLock { $0.count(.idleTimeout) }
                    drop(fd)
                }
            }
        }
    }

    // MARK: - The shared body budget

    /// Counts the connection's input against the shared budget (beyond its own share), and
    /// lets paused senders go on when the budget has room again.
    func account(_ c: HTTPConnection) {
        let now = max(0, c.buffered - Self.unbudgetedBytes)
        budgetUsed += now - c.budgeted
        let freed = now < c.budgeted
        c.budgeted = now
        bufferedRequestBytes.store(budgetUsed, ordering: .relaxed)
        if freed { resumePaused() }
    }

    /// A connection gone: its budget is free.
    func release(_ c: HTTPConnection) {
        budgetUsed -= c.budgeted
        c.budgeted = 0
        bufferedRequestBytes.store(budgetUsed, ordering: .relaxed)
        paused.remove(c.fd)
        pausedSenders.store(paused.count, ordering: .relaxed)
        resumePaused()
    }

    func pause(_ c: HTTPConnection) {
        c.paused = true
        paused.insert(c.fd)
        pausedSenders.store(paused.count, ordering: .relaxed)
    }

    private func resumePaused() {
        guard !paused.isEmpty, budgetUsed < settings.bodyBudgetBytes else { return }
        let list = paused
        paused = []
        pausedSenders.store(0, ordering: .relaxed)
        for fd in list {
            guard let c = connections[fd] else { continue }
            c.paused = false
            finishWrite(c)
        }
    }

    /// Over the output budget: the stream with the most unread output is closed (counted as
    /// a stream dropped). Its descriptor, or nil when no stream holds any.
    @discardableResult
    func dropFullestStream() -> Int32? {
        let fullest = streams.values.compactMap { connections[$0] }.max { $0.pendingOutput < $1.pendingOutput }
        guard let fullest, fullest.pendingOutput > 0 else { return nil }
        streamsDropped.add(1, ordering: .relaxed)
        note(.outputBudget, ["address": "\(fullest.address ?? "-")", "unread": "\(fullest.pendingOutput)"])
        drop(fullest.fd)
        return fullest.fd
    }

    /// Counts a refusal and logs it: the first of a kind at once, then how many more there
    /// were at most once a minute, so an attack cannot fill the journal.
    func note(_ reason: Refusals.Reason, _ detail: Logger.Metadata) {
        let metadata = refused.withLock { $0.note(reason, detail: detail, now: monotonicMillis()) }
        if let metadata { logger?.warning("api.refused", metadata: metadata) }
    }
}

/// Refusals by reason, and when each was last logged.
public struct Refusals: Sendable {
    /// Why a connection or a request was refused: the `reason` label of
    /// `beacond_api_refused_total`.
    public enum Reason: String, CaseIterable, Sendable {
        /// The connection limit (users other than root, or everyone past root's reserve).
        case connections
        case connectionsPerUser = "connections_per_user"
        /// TCP: one address's connection limit.
        case connectionsPerAddress = "connections_per_address"
        /// TCP, full: an idle connection closed to make room for a new one.
        case idleEvicted = "idle_evicted"
        /// Refused on its head by the listener's gate: no token (401).
        case unauthorized
        /// Refused on its head: a `Host` the listener does not answer for (421, DNS rebinding).
        case hostNotAllowed = "host_not_allowed"
        /// Answers queued and unread past `maxQueuedOutputBytes`: a 503 instead of a large
        /// answer, or the fullest stream closed.
        case outputBudget = "output_budget"
        /// Out of file descriptors: shed with the spare one.
        case descriptors
        /// No request for `idleTimeout`: closed.
        case idleTimeout = "idle_timeout"
        /// A request not whole within `requestTimeout`: 408.
        case requestTimeout = "request_timeout"
        case headTooLarge = "head_too_large"
        case bodyTooLarge = "body_too_large"
        /// Malformed framing: 400 (or 501 for a transfer coding other than chunked).
        case badRequest = "bad_request"
        /// Refused on its head (`admit`), before any body was read: no admin rights.
        case forbidden
        /// Refused on its head: a path or a method the API has not (404, 405).
        case noRoute = "no_route"
    }

    static let logInterval: Int64 = 60_000

    var totals: [String: Int] = Dictionary(uniqueKeysWithValues: Reason.allCases.map { ($0.rawValue, 0) })
    private var lastLogged: [Reason: Int64] = [:]
    private var unlogged: [Reason: Int] = [:]

    mutating func count(_ reason: Reason) {
        totals[reason.rawValue, default: 0] += 1
    }

    /// The counts held back whose minute has passed, as `api.refused` lines' metadata: without
    /// this, refusals after the last logged one would go untold once an attack stops.
    mutating func overdue(now: Int64) -> [Logger.Metadata] {
        var lines: [Logger.Metadata] = []
        for (reason, count) in unlogged.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            guard let last = lastLogged[reason], now - last >= Self.logInterval else { continue }
            lines.append(["reason": "\(reason.rawValue)", "more_in_last_minute": "\(count)"])
            lastLogged[reason] = now
            unlogged[reason] = nil
        }
        return lines
    }

    /// Counts it; returns the metadata of the `api.refused` line to log, if one is due.
    mutating func note(_ reason: Reason, detail: Logger.Metadata, now: Int64) -> Logger.Metadata? {
        count(reason)
        // A wrong path is a client's mistake, answered and counted, not an attack to log.
        if reason == .noRoute { return nil }
        if let last = lastLogged[reason], now - last < Self.logInterval {
            unlogged[reason, default: 0] += 1
            return nil
        }
        lastLogged[reason] = now
        let more = unlogged.removeValue(forKey: reason) ?? 0
        var metadata = detail
        metadata["reason"] = "\(reason.rawValue)"
        if more > 0 { metadata["more_in_last_minute"] = "\(more)" }
        return metadata
    }
}
