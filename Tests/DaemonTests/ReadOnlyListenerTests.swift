import Foundation
import TestSupport
import Testing

/// The read-only TCP listener (`http:`, issue 30): the socket's answers for a network reader
/// with the token, nothing without it, no changes at all, and a thousand idle clients that
/// hold up neither the socket's API nor the engine.
@Suite(.serialized) struct ReadOnlyListenerTests {
    static let token = "t0k3n-of-the-store-42"

    /// A daemon whose listener asks for `token` on a free loopback port; the port.
    static func daemon(extra: String = "") throws -> (APIDaemon, Int) {
        let port = try freeLoopbackPort()
        let dir = try Executables.temporaryDirectory()
        let file = dir.appendingPathComponent("http.token").path
        try (token + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let d = try APIDaemon(
            extra: APIEndpointTests.site + "http: {listen: \"127.0.0.1:\(port)\", token_file: \(file)}\n" + extra,
            dir: dir)
        try d.start()
        return (d, port)
    }

    /// curl's status code and body for a request to the listener.
    static func curl(_ port: Int, _ method: String, _ path: String, _ headers: [String] = []) throws -> (Int, String) {
        let out = try runCommand(
            URL(fileURLWithPath: "/usr/bin/curl"),
            ["-s", "-X", method, "-w", "\n%{http_code}", "--max-time", "5"] + headers.flatMap { ["-H", $0] }
                + ["http://127.0.0.1:\(port)\(path)"])
        let lines = out.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    @Test func readsNeedTheTokenAndChangesAreRefused() throws {
        let (d, port) = try Self.daemon()
        try d.post([APIDaemon.sighting(major: 7)])
        let bearer = "Authorization: Bearer \(Self.token)"
        for headers in [[], ["Authorization: Bearer wrong"], ["Cookie: beacond_token=nope"]] {
            let (status, body) = try Self.curl(port, "GET", "/v1/status", headers)
            #expect(status == 401 && !body.contains("api-test") && body.contains("\"unauthorized\""), "\(headers)")
        }
        let (status, body) = try Self.curl(port, "GET", "/v1/status", [bearer])
        #expect(status == 200 && body.contains("\"gateway\":\"api-test\""))
        #expect(try Self.curl(port, "GET", "/v1/zones", ["Cookie: a=b; beacond_token=\(Self.token)"]).0 == 200)
        #expect(try Self.curl(port, "GET", "/metrics?token=\(Self.token)", []).1.contains("beacond_build_info"))
        for path in ["/v1/assets", "/v1/assets/cart-17", "/v1/beacons", "/v1/events", "/v1/openapi.json"] {
            #expect(try Self.curl(port, "GET", path, [bearer]).0 == 200, "\(path)")
        }
        // Every change stays on the socket, the token notwithstanding
        let region = "{\"uuid\": \"\(APIDaemon.uuid)\"}"
        let put = try runCommand(
            URL(fileURLWithPath: "/usr/bin/curl"),
            [
                "-s", "-X", "PUT", "-w", "\n%{http_code}", "-H", bearer, "--data", region,
                "http://127.0.0.1:\(port)/v1/clients/app/regions/door",
            ])
        #expect(put.stdout.hasSuffix("\n405") && put.stdout.contains("read_only"), "\(put.stdout)")
        #expect(try Self.curl(port, "POST", "/v1/sightings", [bearer]).0 == 405)
        #expect(try Self.curl(port, "PATCH", "/v1/alarms/carts-out", [bearer]).0 == 405)
        #expect(try Self.curl(port, "DELETE", "/v1/clients/app/regions/till", [bearer]).0 == 405)
        #expect(try Self.curl(port, "GET", "/v1/clients", [bearer]).0 == 404, "served on the socket only")
        let regions = try d.client.request("GET", "/v1/clients/app/regions").object["regions"] as? [[String: Any]]
        #expect(regions?.count == 2, "nothing changed")
        #expect(d.stop() == 0)
    }

    /// Without a token the listener binds loopback only, unless the file says otherwise.
    @Test func anOpenListenerOffLoopbackIsAConfigError() throws {
        let d = try APIDaemon(extra: "http:\n  listen: \"0.0.0.0:9750\"\n")
        let check = try runCommand(Executables.built("beacond"), ["--check-config", "--config", d.configPath])
        #expect(check.status == 78, "\(check.stderr)")
        #expect(
            check.stderr.contains(
                "\(d.configPath):5:11: http.listen: 0.0.0.0:9750 without token_file would show the store's positions "
                    + "and events to anyone on the network"), "\(check.stderr)")
        try d.rewrite(extra: "http: {listen: \"0.0.0.0:9750\", allow_unauthenticated: true}\n")
        #expect(try runCommand(Executables.built("beacond"), ["--check-config", "--config", d.configPath]).status == 0)
    }

    /// A thousand connections held open on the listener: the socket's API still answers, the
    /// engine still turns sightings into events, and the listener itself still serves.
    @Test func aThousandIdleClientsHoldUpNothing() throws {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = max(limit.rlim_cur, min(limit.rlim_max, 4096))
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        let (d, port) = try Self.daemon()
        var idle: [Int32] = []
        defer { for fd in idle { close(fd) } }
        for _ in 0..<1000 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            #expect(connected == 0)
            idle.append(fd)
        }
        _ = try d.waitForStatus("the listener's thousand connections") { _ in true }
        try d.post([APIDaemon.sighting(major: 7)])
        _ = try d.waitForHistory("the regions' states, through the engine") { events in
            events.filter { $0["type"] as? String == "beacond.region.state" }.count >= 2
        }
        #expect(try d.client.request("GET", "/v1/status").status == 200)
        #expect(try Self.curl(port, "GET", "/v1/status", ["Authorization: Bearer \(Self.token)"]).0 == 200)
        #expect(d.stop() == 0)
    }

    /// A real Prometheus (Debian's) scrapes the listener with the token, as docs/service.md's
    /// scrape configuration says.
    @Test func prometheusScrapesTheListener() throws {
        let (d, port) = try Self.daemon()
        let dir = d.dir.appendingPathComponent("prometheus")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let webPort = try freeLoopbackPort()
        try """
        global: {scrape_interval: 1s}
        scrape_configs:
          - job_name: beacond
            authorization: {credentials_file: \(d.dir.appendingPathComponent("http.token").path)}
            static_configs: [{targets: ["127.0.0.1:\(port)"]}]

        """.write(to: dir.appendingPathComponent("prometheus.yml"), atomically: true, encoding: .utf8)
        let prometheus = try RunningDaemon(
            arguments: [
                "--config.file=\(dir.path)/prometheus.yml", "--storage.tsdb.path=\(dir.path)/data",
                "--web.listen-address=127.0.0.1:\(webPort)",
            ], environment: ["PATH": "/usr/bin:/bin"], executable: "/usr/bin/prometheus")
        defer { _ = prometheus.stop() }
        var answer = ""
        try? eventually("Prometheus to scrape beacond", timeout: 30, every: 0.2) {
            answer = (try? Self.curl(webPort, "GET", "/api/v1/query?query=beacond_build_info", []).1) ?? ""
            return answer.contains("\"value\":[")
        }
        #expect(answer.contains("\"job\":\"beacond\"") && answer.contains("\"version\":\"0.1.0\""), "\(answer)")
        let up = try Self.curl(webPort, "GET", "/api/v1/query?query=up", []).1
        #expect(up.contains("\"1\"]"), "\(up)")
        #expect(d.stop() == 0)
    }
}
