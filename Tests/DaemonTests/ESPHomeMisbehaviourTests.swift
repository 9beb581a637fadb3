import Foundation
import TestSupport
import Testing

/// Proxies, and things answering at their addresses, that hold up the one ESPHome thread or
/// fill the log (issue 61, M2 and L1–L3): each is contained, and the well-behaved proxy beside
/// it goes on being heard.
@Suite(.serialized) struct ESPHomeMisbehaviourTests {
    /// `esp-aisle` the fake proxy on 127.0.0.1, and each of `others` a proxy at `host`.
    static func config(_ proxy: FakeESPHomeProxy, others: [(receiver: String, host: String, port: Int)]) -> String {
        var text = "receivers:\n  - {id: esp-aisle, position: {x: 4, y: 2}, rssi_at_1m: -59}\n"
        for o in others { text += "  - {id: \(o.receiver), position: {x: 1, y: 1}}\n" }
        text += "esphome:\n  - {receiver: esp-aisle, host: 127.0.0.1, port: \(proxy.port)}\n"
        for o in others { text += "  - {receiver: \(o.receiver), host: \(o.host), port: \(o.port)}\n" }
        return text + "clients:\n  - id: app\n    regions:\n      - {id: store, uuid: \(APIDaemon.uuid)}\n"
    }

    static func proxies(_ d: APIDaemon) throws -> [String: [String: Any]] {
        let list = try d.client.request("GET", "/v1/status").object["esphome"] as? [[String: Any]] ?? []
        return Dictionary(uniqueKeysWithValues: list.map { ($0["receiver"] as? String ?? "", $0) })
    }

    /// Three proxies given by names a name server never answers for (a DNS server down): the
    /// fourth, given by address, is connected at once; the three are said not to resolve yet.
    /// Before, `getaddrinfo` held the thread for the resolver's 30 s at each name in turn.
    /// Needs root: the daemon runs with its own `/etc/resolv.conf`, naming a server that reads
    /// queries and never answers.
    @Test(.enabled(if: getuid() == 0, "needs root: a mount namespace and port 53"))
    func namesThatDoNotResolveHoldUpNoOtherProxy() throws {
        let silent = try SilentNameServer()
        let dir = try Executables.temporaryDirectory()
        let resolv = dir.appendingPathComponent("resolv.conf").path
        try "nameserver \(silent.address)\noptions timeout:30 attempts:1\n".write(
            toFile: resolv, atomically: true, encoding: .utf8)
        let proxy = try FakeESPHomeProxy(adverts: ESPHomeProxyTests.adverts)
        let named = (1...3).map { (receiver: "esp-named-\($0)", host: "esp-\($0).store.example", port: 6053) }
        let d = try APIDaemon(extra: Self.config(proxy, others: named))
        try d.start(launcher: [
            "/usr/bin/unshare", "-m", "--", "/bin/sh", "-c", "mount --bind \"$0\" /etc/resolv.conf && exec \"$@\"",
            resolv,
        ])
        try eventually("the proxy given by address heard", timeout: 10) {
            try ESPHomeProxyTests.receivers(d) == ["esp-aisle"]
        }
        try eventually("the names asked of the silent server") { silent.queries > 0 }
        try eventually("the names said not to resolve yet") {
            let shown = try Self.proxies(d)
            return named.allSatisfy {
                (shown[$0.receiver]?["last_error"] as? String)?.contains("does not resolve yet") == true
            }
        }
        let doctor = try runCommand(Executables.built("beaconctl"), ["--socket", d.socketPath, "doctor"])
        #expect(
            doctor.stdout.contains(
                "[FAIL] esphome esp-named-1: esp-1.store.example:6053: esp-1.store.example does not resolve yet"),
            "\(doctor.stdout)")
        #expect(doctor.stdout.contains("fix: use the proxy's IP address, or check its name in DNS/mDNS"))
        #expect(d.stop() == 0)
    }

    /// A proxy that drops beacond right after Hello: its first drop told, the next ones summed
    /// once a minute (`esphome.flapping`), and retried after a growing wait — not a warning
    /// every 1.5 s for ever.
    @Test func aProxyThatDropsAfterHelloIsToldOnceAndBackedOff() throws {
        let proxy = try FakeESPHomeProxy(adverts: ESPHomeProxyTests.adverts, behaviour: "drop-after-hello")
        let d = try APIDaemon(extra: Self.config(proxy, others: []))
        try d.start()
        try eventually("four connections", timeout: 40) { proxy.connections >= 4 }
        let told = d.daemon!.logs.filter { $0.contains("esphome.disconnected") || $0.contains("esphome.flapping") }
        #expect(told.count == 1, "\(told)")
        #expect(told.first?.contains("event=esphome.disconnected") == true, "\(told)")
        #expect(d.stop() == 0)
    }

    /// A proxy that floods pings and never reads the answers is given up once its backlog
    /// passes the bound, rather than holding the thread a second a turn; the other proxy goes on.
    @Test func aProxyThatNeverReadsIsGivenUp() throws {
        let flooder = try FakeESPHomeProxy(adverts: ESPHomeProxyTests.adverts, behaviour: "ping-flood")
        let proxy = try FakeESPHomeProxy(adverts: ESPHomeProxyTests.adverts)
        let d = try APIDaemon(
            extra: Self.config(proxy, others: [(receiver: "esp-flood", host: "127.0.0.1", port: flooder.port)]))
        try d.start()
        try eventually("the flooder given up", timeout: 30, detail: { d.daemon!.logs.joined(separator: "\n") }) {
            d.daemon!.logs.contains { $0.contains("the proxy does not read what beacond sends") }
        }
        try eventually("the other proxy heard") { try ESPHomeProxyTests.receivers(d).contains("esp-aisle") }
        #expect(d.stop() == 0)
    }

    /// More advertisements a second than any proxy's radio forwards: the rest is shed, counted
    /// in status and metrics, and told in the log.
    @Test func aFloodOfAdvertisementsIsShed() throws {
        let proxy = try FakeESPHomeProxy(adverts: ESPHomeProxyTests.adverts, rate: 1000)
        let d = try APIDaemon(extra: Self.config(proxy, others: []))
        try d.start()
        var shed = 0
        try eventually("advertisements shed", timeout: 20) {
            shed = try Self.proxies(d)["esp-aisle"]?["shed"] as? Int ?? 0
            return shed > 0
        }
        let metrics = try d.client.request("GET", "/metrics").body
        #expect(metrics.contains("beacond_esphome_advertisements_shed_total{proxy=\"esp-aisle\"}"), "\(metrics)")
        #expect(
            d.daemon!.logs.contains {
                $0.isLog("esphome.advertisements_shed", level: "warning", having: ["advertisements"])
            })
        #expect(d.stop() == 0)
    }
}
