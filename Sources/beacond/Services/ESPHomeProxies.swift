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
/// others: connections are opened without blocking, names are resolved on threads of their
/// own (`HostResolver`), and what a proxy does not read waits in its link, not in `send`. A
/// lost connection is opened again after a backoff with jitter (1 s doubling to a minute,
/// started again only after a connection that lasted a minute), told once in the log with
/// its reason; a proxy that keeps dropping soon after Hello is told once a minute with a count.
/// A reload takes the new list: proxies added are connected, removed ones told goodbye, and
/// changed ones (host, port, key, password) connected again; the others keep their session.
final class ESPHomeProxies: DaemonService, Sendable {
    let name = "esphome"
    let startsAfter = ["engine"]
    /// The proxies to connect to; a reload replaces them and bumps `generation`.
    private let proxies: Mutex<[ESPHomeProxySpec]>
    private let generation = Atomic<Int>(0)
    let deliver: @Sendable ([Sighting]) -> Void
    let clock: @Sendable () -> Timestamp
    let logger: Logger

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
                if var session = link.session { sendOnce(session.disconnect("removed by a reload"), on: link.fd) }
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
        let resolver = HostResolver { [wake] in
            var one: UInt64 = 1
            _ = write(wake, &one, 8)
        }
        while !stopRequested.load(ordering: .acquiring) {
            if generation.load(ordering: .acquiring) != seen {
                seen = generation.load(ordering: .acquiring)
                links = reconcile(links, with: proxies.withLock { $0 })
            }
            let now = clock()
            for i in links.indices {
                let resolved = links[i].resolvingSince.map { $0 != resolver.completed } ?? false
                if links[i].fd < 0, now >= links[i].retryAt || resolved { open(&links[i], resolver, at: now) }
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
                let events = link.connecting ? POLLOUT : POLLIN | (link.unsent.isEmpty ? 0 : POLLOUT)
                polled.append(pollfd(fd: link.fd, events: Int16(events), revents: 0))
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
                let revents = Int32(polled[k + 1].revents)
                if links[i].connecting {
                    connected(&links[i], at: after)
                    continue
                }
                if revents & Int32(POLLOUT) != 0 { flush(&links[i], at: after) }
                if links[i].fd >= 0, revents & ~Int32(POLLOUT) != 0 { read(&links[i], into: &buffer, at: after) }
            }
            publishStates(links)
        }
        for i in links.indices where links[i].fd >= 0 {
            if var session = links[i].session { sendOnce(session.disconnect("beacond stopping"), on: links[i].fd) }
            close(links[i].fd)
            links[i].fd = -1
        }
    }
}
