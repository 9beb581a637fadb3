import Foundation
import TestSupport
import Testing

/// Issue 38's findings on the read-only TCP listener, each sent as the adversarial test sent it.
@Suite(.serialized) struct ListenerTrustTests {
    /// #11: a loopback listener without a token (the README's own set-up) answered
    /// `Host: rebind.attacker.example` with full data: a web page whose name was rebound to
    /// 127.0.0.1 could read the store. Only IP addresses, localhost and the listen host pass.
    @Test func aRebindingHostIsRefusedWithoutAToken() throws {
        let port = try freeLoopbackPort()
        let d = try APIDaemon(extra: APIEndpointTests.site + "http: {listen: \"127.0.0.1:\(port)\"}\n")
        try d.start()
        let (refused, body) = try ReadOnlyListenerTests.curl(
            port, "GET", "/v1/status", ["Host: rebind.attacker.example"])
        #expect(refused == 421 && body.contains("host_not_allowed") && !body.contains("api-test"), "\(body)")
        for host in ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)", "LOCALHOST"] {
            #expect(try ReadOnlyListenerTests.curl(port, "GET", "/v1/status", ["Host: \(host)"]).0 == 200, "\(host)")
        }
        #expect(d.stop() == 0)
    }

    /// #12 and #14: `/v1/status` over TCP showed webhook URLs with the credentials in them;
    /// a raw token with `+` (39 % of the documented `base64` recipe's) was refused in `?token=`.
    @Test func webhookCredentialsAreRedactedAndARawTokenWithAPlusIsTaken() throws {
        let token = "ab+cd/ef+gh=="
        let port = try freeLoopbackPort()
        let dir = try Executables.temporaryDirectory()
        let file = dir.appendingPathComponent("http.token").path
        try (token + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let d = try APIDaemon(
            extra: APIEndpointTests.site + "http: {listen: \"127.0.0.1:\(port)\", token_file: \(file)}\n"
                + "webhooks:\n  - {id: crm, url: \"https://ops:hunter2@crm.example/hook?key=s3cret&v=2\"}\n",
            dir: dir)
        try d.start()
        let (status, body) = try ReadOnlyListenerTests.curl(port, "GET", "/v1/status?token=\(token)")
        #expect(status == 200, "the raw token in ?token= was refused: \(body)")
        #expect(!body.contains("hunter2") && !body.contains("s3cret"))
        #expect(body.contains("https://***@crm.example/hook?key=***&v=***"), "\(body)")
        // #15: the page opened with the token keeps it in a cookie no script can read.
        let page = try runCommand(
            URL(fileURLWithPath: "/usr/bin/curl"),
            ["-s", "-D", "-", "-o", "/dev/null", "http://127.0.0.1:\(port)/?token=\(token)"])
        let cookie = page.stdout.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") } ?? ""
        #expect(cookie.contains("beacond_token=\(token)") && cookie.contains("HttpOnly"), "\(page.stdout)")
        // The socket's answer too: the status goes into support tickets.
        let socket = try d.client.request("GET", "/v1/status").body
        #expect(!socket.contains("hunter2") && !socket.contains("s3cret"))
        #expect(d.stop() == 0)
    }

    /// #21: `http.listen: "127.attacker.example:9750"` passed as loopback, so no token was asked.
    @Test func aNameThatStartsWith127IsNotLoopback() throws {
        let d = try APIDaemon(extra: "http: {listen: \"127.attacker.example:9750\"}\n")
        let check = try runCommand(Executables.built("beacond"), ["--check-config", "--config", d.configPath])
        #expect(check.status == 78 && check.stderr.contains("without token_file"), "\(check.stderr)")
    }

    /// #15: a script inside an SVG floor plan ran on the daemon's origin when the plan was
    /// opened on its own. It is served sandboxed, with nothing to load or run.
    @Test func anSVGFloorPlanCannotRunScript() throws {
        let dir = try Executables.temporaryDirectory()
        let plan = dir.appendingPathComponent("plan.svg")
        try "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(document.cookie)</script></svg>"
            .write(to: plan, atomically: true, encoding: .utf8)
        let d = try APIDaemon(
            extra: OpenAPIContractTests.site.replacingOccurrences(
                of: "receivers:\n",
                with: "positioning: {floor_image: {file: \(plan.path), scale: 20, origin: [10, 190]}}\nreceivers:\n"),
            dir: dir)
        try d.start()
        let response = try d.client.request("GET", "/v1/floor/image")
        #expect(response.status == 200 && response.headers["content-type"] == "image/svg+xml")
        let policy = response.headers["content-security-policy"] ?? ""
        #expect(policy.hasPrefix("sandbox") && policy.contains("default-src 'none'"), "\(response.headers)")
        #expect(d.stop() == 0)
    }

    /// A TCP connection to the listener from `source` (a loopback address: all of 127/8 is
    /// this machine's), left open; its descriptor.
    static func connectIdle(to port: Int, from source: String) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = in_port_t(UInt16(port).bigEndian)
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        _ = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return fd
    }

    /// #9 and #16: clients without the token held all 1,024 connections and the token holder
    /// (Prometheus) got no answer; refusals were not in `/metrics` and 401s not logged. One
    /// address holds at most 64 (its own idle ones make room for its next); when all 1,024 are
    /// held, the longest idle makes room.
    @Test func idleClientsCannotKeepTheTokenHolderOut() throws {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = max(limit.rlim_cur, min(limit.rlim_max, 4096))
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        let (d, port) = try ReadOnlyListenerTests.daemon()
        var idle: [Int32] = []
        defer { for fd in idle { close(fd) } }
        // Sixteen addresses, 64 each: the listener's 1,024, all idle, none with a token.
        for a in 2...17 {
            for _ in 0..<64 { idle.append(Self.connectIdle(to: port, from: "127.0.0.\(a)")) }
        }
        // More from one of them: that address's idle ones make room; it never holds more than 64.
        for _ in 0..<20 { idle.append(Self.connectIdle(to: port, from: "127.0.0.2")) }
        // The token holder gets in, again and again.
        let bearer = "Authorization: Bearer \(ReadOnlyListenerTests.token)"
        for _ in 0..<5 { #expect(try ReadOnlyListenerTests.curl(port, "GET", "/metrics", [bearer]).0 == 200) }
        #expect(try ReadOnlyListenerTests.curl(port, "GET", "/v1/status", []).0 == 401)
        let metrics = try ReadOnlyListenerTests.curl(port, "GET", "/metrics", [bearer]).1
        let open = metrics.split(separator: "\n").first { $0.hasPrefix("beacond_http_connections ") }
        #expect((open.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 9999) <= 1024, "\(open ?? "")")
        for reason in ["idle_evicted", "unauthorized"] {
            let line = metrics.split(separator: "\n").first {
                $0.hasPrefix("beacond_http_refused_total{reason=\"\(reason)\"}")
            }
            #expect((line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0) >= 1, "\(reason)")
        }
        #expect(d.stop() == 0)
        #expect(d.daemon!.logs.contains { $0.contains("api.refused") && $0.contains("reason=unauthorized") })
    }

    /// #17: any socket reader could make `/v1/reachability` open ~4,500 connections a second to
    /// the webhooks' hosts. An answer is reused for a second: twenty asks in a row open one.
    @Test func reachabilityAskedInALoopConnectsOnce() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        listen(listener, 128)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let d = try APIDaemon(
            extra: APIEndpointTests.site + "webhooks:\n  - {id: crm, url: \"http://127.0.0.1:\(port)/hook\"}\n")
        try d.start()
        for _ in 0..<20 {
            let body = try d.client.request("GET", "/v1/reachability").object
            let destinations = body["destinations"] as? [[String: Any]] ?? []
            #expect(destinations.first?["reachable"] as? Bool == true)
        }
        _ = fcntl(listener, F_SETFL, O_NONBLOCK)
        var accepted = 0
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 { break }
            accepted += 1
            close(fd)
        }
        #expect(accepted == 1, "\(accepted) connections for 20 asks")
        #expect(d.stop() == 0)
    }
}
