import Foundation
import Synchronization
import TestSupport
import Testing

/// `beaconctl doctor` judges reachability from the daemon's own process, so a daemon whose
/// sandbox stops its webhooks is never reported `ok` from an operator's unsandboxed shell.
@Suite(.serialized) struct DoctorSandboxTests {
    /// The daemon runs in a network namespace of its own (`unshare -n`: no loopback, as an
    /// `IPAddressDeny=localhost` unit has none), while beaconctl and the receiver share the
    /// host's. Before, doctor connected from its own process and said `[ok]`, and every event
    /// waited in the outbox for a receiver the daemon could never reach.
    @Test(.enabled(if: getuid() == 0)) func doctorReportsWhatTheDaemonsSandboxCannotReach() throws {
        let receiver = try WebhookReceiver()
        let d = try APIDaemon(
            extra: WebhookDeliveryTests.site(regions: 1) + "webhooks:\n"
                + WebhookDeliveryTests.webhook("crm", receiver),
            monitoring: WebhookDeliveryTests.monitoring)
        try d.start(launcher: ["/usr/bin/unshare", "-n"])

        let seen = try d.client.request("GET", "/v1/reachability").object
        let crm = (seen["destinations"] as? [[String: Any]])?.first
        #expect(crm?["id"] as? String == "crm" && crm?["reachable"] as? Bool == false, "\(seen)")
        #expect((seen["checked_from"] as? [String: Any])?["pid"] as? Int == Int(d.daemon!.process.processIdentifier))

        let port = receiver.url.split(separator: ":").last!.prefix { $0.isNumber }
        let doctor = try runCommand(
            Executables.built("beaconctl"), ["--socket", d.socketPath, "doctor", "--config", d.configPath])
        #expect(
            doctor.stdout.contains(
                "[FAIL] webhook crm: cannot connect to 127.0.0.1:\(port): Network is unreachable (from beacond's "
                    + "process; beaconctl's own connection succeeds, so beacond's sandbox stops it)"),
            "\(doctor.stdout)")
        #expect(doctor.stdout.contains("IPAddressAllow=127.0.0.1"), "\(doctor.stdout)")
        #expect(doctor.status == 1)
        #expect(receiver.requests.isEmpty, "a check sends no request")
        #expect(d.stop() == 0)
    }

    /// Reachability is open to readers, and readers that ask at once share one probe: with a
    /// receiver that never answers (each probe waits 3 s), 32 readers cannot make the daemon
    /// run 32 probing threads.
    @Test func readersAskingAtOnceShareOneProbe() throws {
        let silent = try SilentListener()
        let d = try APIDaemon(
            extra: WebhookDeliveryTests.site(regions: 1) + "webhooks:\n"
                + "  - {id: crm, url: \"http://127.0.0.1:\(silent.port)/hook\", events: [\"region.*\"]}\n",
            monitoring: WebhookDeliveryTests.monitoring)
        try d.start()
        let pid = d.daemon!.process.processIdentifier
        let answers = Mutex<[String]>([])
        let group = DispatchGroup()
        for _ in 0..<32 {
            DispatchQueue.global().async(group: group) {
                let body = try? d.client.request("GET", "/v1/reachability").object
                let error = (body?["destinations"] as? [[String: Any]])?.first?["error"] as? String ?? "no answer"
                answers.withLock { $0.append(error) }
            }
        }
        var most = 0
        while group.wait(timeout: .now() + .milliseconds(20)) == .timedOut {
            most = max(most, Self.threads(of: pid, named: "reachability"))
        }
        #expect(most == 1, "probing threads at once: \(most)")
        let all = answers.withLock { $0 }
        #expect(all.count == 32 && all.allSatisfy { $0.hasSuffix("no answer within 3 s") }, "\(all)")
        #expect(d.stop() == 0)
        withExtendedLifetime(silent) {}
    }

    static func threads(of pid: Int32, named name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.filter { task in
            (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8))?.hasPrefix(name) == true
        }.count
    }
}

/// A loopback port whose accept queue is full and never drained: a connection to it gets no
/// answer at all (its SYN is dropped), like a host behind a firewall that drops.
final class SilentListener {
    let port: Int
    private var fds: [Int32] = []

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(listener, raw, length) == 0 && listen(listener, 0) == 0
                    && getsockname(listener, raw, &length) == 0
            }
        }
        guard bound else { throw TestFailure("cannot listen: \(String(cString: strerror(errno)))") }
        fds.append(listener)
        port = Int(UInt16(bigEndian: address.sin_port))
        // Fill the queue: the first connections complete and are never accepted.
        for _ in 0..<4 {
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            _ = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) }
            }
            fds.append(client)
        }
    }

    deinit { for fd in fds { close(fd) } }
}
