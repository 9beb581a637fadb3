import APIModel
import BeaconConfig
import BeaconCore
import BeaconRuntime
import CLinux
import ESPHome
import Glibc
import Logging
import POSIX
import Synchronization

/// ESPHome Bluetooth proxies as receivers (SPEC §9): one thread keeps a connection to each
/// proxy of `esphome:` this gateway connects to, as a client of ESPHome's native API
/// (`ProxySession`), and hands every advertisement it forwards on as a sighting of the
/// proxy's receiver — to the engine, and in a site to the locator, as the radios' are.
///
/// Why one thread for all: a store's 50 proxies are 50 quiet sockets; `poll` over them costs
/// nothing while they are quiet, and a proxy that hangs or never answers holds up none of the
/// others (connections are opened without blocking). A lost connection is opened again after
/// a backoff with jitter (1 s doubling to a minute), told once in the log with its reason.
/// A reload takes the new list: proxies added are connected, removed ones told goodbye, and
/// changed ones (host, port, key, password) connected again; the others keep their session.
final class ESPHomeProxies: DaemonService, Sendable {
    let name = "esphome"
    let startsAfter = ["engine"]
    /// The proxies to connect to; a reload replaces them and bumps `generation`.
    private let proxies: Mutex<[ESPHomeProxySpec]>
    private let generation = Atomic<Int>(0)
    private let deliver: @Sendable ([Sighting]) -> Void
    private let clock: @Sendable () -> Timestamp
    private let logger: Logger
    private let threads = ServiceThreads()
    private let stopRequested = Atomic<Bool>(false)
    /// Written at a stop, so the poll wakes at once.
    private let wake: Int32
    /// Each proxy's state as the loop last left it, for status and metrics.
    let states: Mutex<[ESPHomeProxyState]>

    init(
        proxies: [ESPHomeProxySpec], clock: @escaping @Sendable () -> Timestamp, logger: Logger,
        deliver: @escaping @Sendable ([Sighting]) -> Void
    ) {
        self.proxies = Mutex(proxies)
        self.clock = clock
        self.logger = logger
        self.deliver = deliver
        wake = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        states = Mutex(proxies.map { ESPHomeProxyState(spec: $0) })
    }

    deinit { close(wake) }

    func start() throws {
        let list = proxies.withLock { $0 }
        warnOfExposedKeys(list)
        // Its thread runs with no proxies too, waiting on the wake descriptor alone, so that a
        // reload that adds the first one has it connected.
        threads.spawn(named: "beacond-esphome") { [self] in run() }
        if !list.isEmpty {
            logger.info("esphome.started", metadata: ["proxies": "\(list.map(\.receiver).joined(separator: ","))"])
        }
    }

    func stop() {
        stopRequested.store(true, ordering: .releasing)
        wakeUp()
        threads.join()
    }

    func apply(_ reload: ConfigReload, from old: Config) -> Logger.Metadata {
        let new = reload.running.ownESPHomeProxies
        guard new != proxies.withLock({ $0 }) else { return [:] }
        warnOfExposedKeys(new)
        proxies.withLock { $0 = new }
        generation.add(1, ordering: .releasing)
        wakeUp()
        return ["esphome": "\(new.count) proxies"]
    }

    private func wakeUp() {
        var one: UInt64 = 1
        _ = write(wake, &one, 8)
    }

    private func warnOfExposedKeys(_ list: [ESPHomeProxySpec]) {
        for spec in list {
            guard let file = spec.encryptionKeyFile, let problem = Self.keyFileExposure(file) else { continue }
            logger.warning(
                "esphome.key_file_exposed",
                metadata: [
                    "proxy": "\(spec.receiver)", "file": "\(file)", "problem": "\(problem)", "fix": "chmod 600 \(file)",
                ])
        }
    }

    /// The links for a new list: unchanged proxies keep theirs; removed and changed ones are
    /// told goodbye and closed; new and changed ones start afresh.
    private func reconcile(_ links: [ProxyLink], with list: [ESPHomeProxySpec]) -> [ProxyLink] {
        var kept: [ProxyLink] = []
        for var link in links {
            if list.contains(link.spec) {
                kept.append(link)
            } else if link.fd >= 0 {
                if var session = link.session { send(session.disconnect("removed by a reload"), on: link.fd) }
                close(link.fd)
                link.fd = -1
            }
        }
        let links = list.map { spec in
            kept.first { $0.spec == spec } ?? ProxyLink(spec: spec, receiver: ReceiverID(spec.receiver) ?? .unlisted)
        }
        states.withLock { states in
            states = links.map { link in states.first { $0.spec == link.spec } ?? ESPHomeProxyState(spec: link.spec) }
        }
        return links
    }

    private func run() {
        var seen = generation.load(ordering: .acquiring)
        var links = reconcile([], with: proxies.withLock { $0 })
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !stopRequested.load(ordering: .acquiring) {
            if generation.load(ordering: .acquiring) != seen {
                seen = generation.load(ordering: .acquiring)
                links = reconcile(links, with: proxies.withLock { $0 })
            }
            let now = clock()
            for i in links.indices {
                if links[i].fd < 0, now >= links[i].retryAt { open(&links[i], at: now) }
                // A connection nothing answers (a host gone, a firewall dropping it) would wait
                // for the kernel's two minutes; a proxy on the same network answers in a few ms.
                if links[i].connecting, now - links[i].attemptStarted >= Self.connectTimeout {
                    fail(
                        &links[i],
                        "no answer to the connection in \(Self.connectTimeout): is the proxy on this network?", at: now)
                }
                if links[i].session != nil {
                    let out = links[i].session!.tick(at: now)
                    handle(out, &links[i], at: now)
                }
            }
            var polled = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            var which: [Int] = []
            for (i, link) in links.enumerated() where link.fd >= 0 {
                polled.append(pollfd(fd: link.fd, events: Int16(link.connecting ? POLLOUT : POLLIN), revents: 0))
                which.append(i)
            }
            let soonest = links.filter { $0.fd < 0 }.map { $0.retryAt - now }.min() ?? .seconds(1)
            // With no proxy, only a reload or the stop wakes it.
            let timeout = links.isEmpty ? -1 : Int32(max(10, min(1000, soonest.nanoseconds / 1_000_000)))
            guard poll(&polled, nfds_t(polled.count), timeout) > 0 else {
                publishStates(links)
                continue
            }
            if polled[0].revents != 0 {
                var count: UInt64 = 0
                _ = Glibc.read(wake, &count, 8)
            }
            let after = clock()
            for (k, i) in which.enumerated() where polled[k + 1].revents != 0 {
                if links[i].connecting {
                    connected(&links[i], at: after)
                } else {
                    read(&links[i], into: &buffer, at: after)
                }
            }
            publishStates(links)
        }
        for i in links.indices where links[i].fd >= 0 {
            if var session = links[i].session { send(session.disconnect("beacond stopping"), on: links[i].fd) }
            close(links[i].fd)
            links[i].fd = -1
        }
    }

    private func open(_ link: inout ProxyLink, at now: Timestamp) {
        // The key is read at each attempt: a key file fixed (or its permissions) is picked up.
        switch Self.key(of: link.spec) {
        case let .success(psk): link.psk = psk
        case let .failure(why): return fail(&link, why.message, at: now)
        }
        switch TCPConnect.start(host: link.spec.host, port: link.spec.port) {
        case let .success(fd):
            (link.fd, link.connecting, link.attemptStarted) = (fd, true, now)
        case let .failure(why):
            fail(&link, "\(link.spec.host):\(link.spec.port): \(why)", at: now)
        }
    }

    /// How long a connection may wait to be accepted.
    static let connectTimeout = TimeSpan.seconds(10)

    /// Why a key file is readable by more than the daemon's user (its group or everyone), or nil:
    /// anyone who reads the key can listen to the proxy and speak for it.
    static func keyFileExposure(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & 0o077 != 0 else { return nil }
        return "readable by other users (mode \(String(info.st_mode & 0o777, radix: 8)))"
    }

    /// The proxy's API encryption key, nil for a plaintext one, or why it cannot be had.
    static func key(of spec: ESPHomeProxySpec) -> Result<[UInt8]?, ESPHomeProxySpec.KeyProblem> {
        let text: String
        if let file = spec.encryptionKeyFile {
            do {
                text = try readSecretFile(file)
            } catch {
                return .failure(.init(message: "cannot read encryption_key_file \(file): \(error)"))
            }
        } else if let inline = spec.encryptionKey {
            text = inline
        } else {
            return .success(nil)
        }
        return ESPHomeProxySpec.key(text).map { $0 }
    }

    private func connected(_ link: inout ProxyLink, at now: Timestamp) {
        if let why = TCPConnect.finish(link.fd) {
            return fail(&link, "\(link.spec.host):\(link.spec.port): \(why)", at: now)
        }
        link.connecting = false
        var session = ProxySession(settings: .init(password: link.spec.password, psk: link.psk), at: now)
        send(session.opening(), on: link.fd)
        if let reason = session.closeReason { return fail(&link, reason, at: now) }
        link.session = session
    }

    private func read(_ link: inout ProxyLink, into buffer: inout [UInt8], at now: Timestamp) {
        let n = buffer.withUnsafeMutableBytes { Glibc.read(link.fd, $0.baseAddress, $0.count) }
        if n == 0 { return fail(&link, link.session?.connectionClosed() ?? "the proxy closed the connection", at: now) }
        if n < 0 {
            if errno == EAGAIN || errno == EINTR { return }
            return fail(&link, "read: \(String(cString: strerror(errno)))", at: now)
        }
        let wasListening = link.session?.phase == .listening
        guard let out = link.session?.receive(buffer[0..<n], at: now) else { return }
        if !wasListening, let session = link.session, session.phase == .listening {
            link.connectedSince = now
            link.failures = 0
            link.lastError = nil
        }
        handle(out, &link, at: now)
    }

    private func handle(_ out: ProxySession.Output, _ link: inout ProxyLink, at now: Timestamp) {
        if !out.send.isEmpty { send(out.send, on: link.fd) }
        if !out.advertisements.isEmpty {
            var batch: [Sighting] = []
            batch.reserveCapacity(out.advertisements.count)
            for ad in out.advertisements {
                do {
                    batch.append(try ad.sighting(receiver: link.receiver, at: now))
                } catch {
                    link.refused += 1
                    if link.refused == 1 || link.refused % 1000 == 0 {
                        logger.warning(
                            "esphome.advertisement_refused",
                            metadata: [
                                "proxy": "\(link.spec.receiver)", "reason": "\(error)", "count": "\(link.refused)",
                            ])
                    }
                }
            }
            link.advertisements += batch.count
            if !batch.isEmpty { deliver(batch) }
        }
        if link.session.map({ $0.phase == .listening && link.identityLogged == false }) == true,
            let identity = link.session?.identity, !identity.model.isEmpty
        {
            link.identityLogged = true
            logger.info(
                "esphome.connected",
                metadata: [
                    "proxy": "\(link.spec.receiver)", "name": "\(identity.name)", "model": "\(identity.model)",
                    "esphome": "\(identity.esphomeVersion)", "host": "\(link.spec.host):\(link.spec.port)",
                ])
        }
        if let reason = out.closed { fail(&link, reason, at: now) }
    }

    private func send(_ bytes: [UInt8], on fd: Int32) {
        guard !bytes.isEmpty, fd >= 0 else { return }
        var at = 0
        while at < bytes.count {
            let n = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + at, bytes.count - at, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                at += n
                continue
            }
            guard n < 0, errno == EAGAIN || errno == EINTR else { return }
            var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&p, 1, 1000) == 1 else { return }
        }
    }

    private func fail(_ link: inout ProxyLink, _ reason: String, at now: Timestamp) {
        if link.fd >= 0 { close(link.fd) }
        let wasListening = link.connectedSince != nil
        (link.fd, link.connecting, link.session, link.connectedSince) = (-1, false, nil, nil)
        link.identityLogged = false
        link.failures += 1
        var random = SystemRandomNumberGenerator()
        let wait = Backoff.delay(
            failures: link.failures, first: .seconds(1), longest: .seconds(60),
            jitter: Double.random(in: 0..<1, using: &random))
        link.retryAt = now + wait
        // Told when it changes: a proxy down for a day is one line, not 1,440.
        if reason != link.lastError || wasListening {
            logger.warning(
                "esphome.disconnected",
                metadata: [
                    "proxy": "\(link.spec.receiver)", "host": "\(link.spec.host):\(link.spec.port)",
                    "reason": "\(reason)",
                    "retry_in": "\(wait)",
                ])
        }
        link.lastError = reason
    }

    private func publishStates(_ links: [ProxyLink]) {
        let now = clock()
        states.withLock { states in
            for (i, link) in links.enumerated() {
                states[i].connectedSince = link.connectedSince
                states[i].identity = link.session?.identity ?? states[i].identity
                states[i].refused = link.refused
                states[i].lastError = link.lastError
                states[i].encrypted = link.psk != nil
                // The rate over the last ten seconds or so.
                let elapsed = now - states[i].rateSince
                if elapsed >= .seconds(10) {
                    let seconds = Double(elapsed.nanoseconds) / 1e9
                    states[i].perSecond = Double(link.advertisements - states[i].advertisements) / seconds
                    (states[i].advertisements, states[i].rateSince) = (link.advertisements, now)
                }
                states[i].total = link.advertisements
            }
        }
    }

    /// Each proxy as `/v1/status` shows it.
    var status: [StatusReport.ESPHomeProxy] {
        states.withLock { states in
            states.map { s in
                var p = StatusReport.ESPHomeProxy()
                p.receiver = s.spec.receiver
                p.host = "\(s.spec.host):\(s.spec.port)"
                p.encrypted = s.encrypted || s.spec.encryptionKey != nil || s.spec.encryptionKeyFile != nil
                p.connected = s.connectedSince != nil
                p.since = s.connectedSince.map(RFC3339.format)
                p.name = s.identity.map(\.name).flatMap { $0.isEmpty ? nil : $0 }
                p.model = s.identity.map(\.model).flatMap { $0.isEmpty ? nil : $0 }
                p.esphomeVersion = s.identity.map(\.esphomeVersion).flatMap { $0.isEmpty ? nil : $0 }
                p.advertisements = s.total
                p.advertisementsPerSecond = s.perSecond
                p.refused = s.refused
                p.lastError = s.lastError
                return p
            }
        }
    }
}

/// One proxy's connection as the loop holds it.
private struct ProxyLink {
    let spec: ESPHomeProxySpec
    let receiver: ReceiverID
    var fd: Int32 = -1
    var connecting = false
    var attemptStarted = Timestamp(nanoseconds: 0)
    var session: ProxySession?
    var psk: [UInt8]?
    var connectedSince: Timestamp?
    var identityLogged = false
    var failures = 0
    var retryAt = Timestamp(nanoseconds: 0)
    var advertisements = 0
    var refused = 0
    var lastError: String?

    init(spec: ESPHomeProxySpec, receiver: ReceiverID) {
        self.spec = spec
        self.receiver = receiver
    }
}

/// What status and metrics show of a proxy.
struct ESPHomeProxyState: Sendable {
    let spec: ESPHomeProxySpec
    var connectedSince: Timestamp?
    var identity: ProxyIdentity?
    var encrypted = false
    /// Advertisements taken since the start, and at the last rate sample.
    var total = 0
    var advertisements = 0
    var rateSince = Timestamp(nanoseconds: 0)
    var perSecond = 0.0
    var refused = 0
    var lastError: String?

    init(spec: ESPHomeProxySpec) { self.spec = spec }
}
