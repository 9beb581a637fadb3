import APIModel
import BeaconConfig
import BeaconCore
import BeaconRuntime
import HTTPServer
import POSIX
import Publishing
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `GET /v1/reachability`: whether each place the daemon sends to (every webhook's host, the
/// site's broker) takes a TCP connection *from the daemon's own process*. Nothing is sent.
///
/// Why here and not in `beaconctl`: under systemd the daemon runs in its unit's sandbox
/// (`IPAddressDeny=`, `RestrictAddressFamilies=`, perhaps a network namespace), so a check made
/// from an operator's shell can say `ok` for a receiver the daemon can never reach. `doctor`
/// asks this instead, and the two cannot disagree. Only configured destinations are tried, so
/// a reader cannot use it to probe arbitrary hosts; one probe runs at a time and every request
/// that arrives meanwhile gets its answer, so readers cannot pile up threads.
extension APIRouter {
    func reachability() -> HTTPReply {
        let config = context.config
        var targets = context.webhooks.map { worker in
            ReachabilityTarget(kind: "webhook", id: worker.settings.id, url: worker.settings.url)
        }
        if let site = config.site {
            let broker = site.mqtt
            targets.append(
                ReachabilityTarget(
                    kind: "broker", id: site.id, url: broker.url, endpoint: (broker.host, "\(broker.port)")))
        }
        let probe = reachabilityProbe
        let all = targets
        return .later { answer in
            probe.run(all) { results in answer(Reply.jsonResponse(Self.reachabilityBody(results))) }
        }
    }

    static func reachabilityBody(_ results: [ReachabilityTarget]) -> JSONValue {
        var report = ReachabilityReport()
        (report.pid, report.systemdUnit) = (Int(getpid()), systemdUnit())
        report.destinations = results.map { t in
            var d = ReachabilityReport.Destination()
            (d.kind, d.id, d.url) = (t.kind, t.id, URLRedaction.redact(t.url))
            (d.host, d.port, d.error) = (t.endpoint?.host, t.endpoint?.port, t.failure)
            return d
        }
        return report.json
    }

    /// The systemd unit the connections were made from when the daemon runs as one
    /// (`INVOCATION_ID` is set for every unit's processes; the unit's name is the last part of
    /// its cgroup).
    static func systemdUnit() -> String? {
        guard getenv("INVOCATION_ID") != nil, let text = try? readTextFile("/proc/self/cgroup") else { return nil }
        return text.split(separator: "\n").last.flatMap { $0.split(separator: "/").last.map(String.init) }
    }
}

/// One destination of `GET /v1/reachability`, and after the probe why it took no connection.
struct ReachabilityTarget: Sendable {
    var kind: String
    var id: String
    var url: String
    var endpoint: (host: String, port: String)?
    var failure: String?

    /// `endpoint`: where to connect; by default an `http(s)://` URL's host and port.
    init(kind: String, id: String, url: String, endpoint: (host: String, port: String)? = nil) {
        self.kind = kind
        self.id = id
        self.url = url
        self.endpoint = endpoint ?? Reachability.endpoint(of: url)
        failure = self.endpoint == nil ? "not an http(s) URL" : nil
    }
}

/// Runs one reachability probe at a time on a thread of its own; requests that come while it
/// runs wait for the same probe (it takes at most 3 s per destination), and requests within
/// `reuse` of its end get its answer: a reader asking in a loop opened ~4,500 connections a
/// second to the webhooks' hosts and the broker (issue 38 #17); now at most one set every
/// `reuse`.
final class ReachabilityProbe: Sendable {
    private let waiting = Mutex<[@Sendable ([ReachabilityTarget]) -> Void]?>(nil)
    /// The last probe's answer, and when it ended (`SystemClock.monotonicMillis`).
    private let last = Mutex<(results: [ReachabilityTarget], at: Int64)?>(nil)
    static let reuse = TimeSpan.seconds(1)

    func run(_ targets: [ReachabilityTarget], _ done: @escaping @Sendable ([ReachabilityTarget]) -> Void) {
        if let last = last.withLock({ $0 }), SystemClock.monotonicMillis - last.at < Self.reuse.nanoseconds / 1_000_000,
            last.results.map(\.url) == targets.map(\.url), last.results.map(\.id) == targets.map(\.id)
        {
            return done(last.results)
        }
        let first = waiting.withLock { list -> Bool in
            if list == nil {
                list = [done]
                return true
            }
            list!.append(done)
            return false
        }
        guard first else { return }
        detachThread(named: "reachability") { [self] in
            var results = targets
            for i in results.indices where results[i].failure == nil {
                if let endpoint = results[i].endpoint {
                    results[i].failure = Reachability.failure(host: endpoint.host, port: endpoint.port)
                }
            }
            last.withLock { $0 = (results, SystemClock.monotonicMillis) }
            let answers = waiting.withLock { list in
                defer { list = nil }
                return list ?? []
            }
            for answer in answers { answer(results) }
        }
    }
}
