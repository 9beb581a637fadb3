import Foundation
import TestSupport
import Testing

/// The two defects that let anyone who may read the API take the daemon down (issue 25,
/// items 1 and 2), sent to the real daemon as the adversarial test sent them.
@Suite(.serialized) struct HostileReaderTests {
    /// Resident memory of a process, from /proc (kB).
    static func residentKB(_ pid: Int32) -> Int {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = text.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// CPU time a process has used, from /proc (clock ticks).
    static func cpuTicks(_ pid: Int32) -> Int {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        let fields = text.split(separator: ")").last?.split(separator: " ") ?? []
        guard fields.count > 13 else { return 0 }
        return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
    }

    /// Writes `count` events of about 3 kB each into the history of a stopped daemon's state
    /// file (Python's sqlite3), as weeks of asset positions would leave it.
    static func fillHistory(_ d: APIDaemon, count: Int) throws {
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            body = '{"specversion":"1.0","type":"beacond.asset.position","data":"' + 'x' * 3000 + '"}'
            db.executemany("INSERT INTO event (id, type, time_ns, body) VALUES (?, ?, ?, ?)",
                (("%020d" % i, "beacond.asset.position", i, body) for i in range(1, int(sys.argv[2]) + 1)))
            db.commit()
            """
        let file = d.dir.appendingPathComponent("state/beacond.sqlite").path
        let out = try runCommand(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, file, "\(count)"])
        guard out.status == 0 else { throw TestFailure("fill: \(out.stderr)") }
    }

    /// Eight clients resume from the start of a 60 MB history and never read: the daemon
    /// sends each a page at a time as it reads, so it holds a page per client, not the
    /// history (before: +480 MB, kept after they closed, and the API stalled meanwhile). A
    /// client that does read gets every event, in order, then the live ones.
    @Test func resumingFromTheStartOfALongHistoryHoldsAPagePerClient() throws {
        let d = try APIDaemon()
        try d.start()
        #expect(d.stop() == 0)
        try Self.fillHistory(d, count: 20_000)
        try d.start()
        let pid = d.daemon!.process.processIdentifier
        let before = Self.residentKB(pid)
        let stalled = try (0..<8).map { _ in try d.client.stream(query: "?after=\(String(format: "%020d", 1))") }
        defer { for s in stalled { s.close() } }
        // Each stalled client has had its first page; status answers throughout.
        var peak = before
        for _ in 0..<20 {
            let started = Date()
            #expect(try d.client.request("GET", "/v1/status").status == 200)
            #expect(Date().timeIntervalSince(started) < 1, "the API stalled")
            peak = max(peak, Self.residentKB(pid))
            usleep(50_000)
        }
        #expect(peak - before < 40_000, "resident memory grew \(peak - before) kB for 8 stalled resumes")

        let reader = try d.client.stream(query: "?after=\(String(format: "%020d", 1))")
        let all = try reader.next(19_999, timeout: 60)
        #expect(all.first?.id == String(format: "%020d", 2) && all.last?.id == String(format: "%020d", 20_000))
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.id! < $1.id! }, "in order, none twice")
        #expect(d.stop() == 0)
    }

    /// With 64 descriptors and connections that take them all, the API sheds new clients
    /// with a 503 from its spare descriptor instead of spinning a core and answering no one,
    /// logs it, and serves again once they let go.
    @Test func outOfDescriptorsTheAPIShedsInsteadOfSpinning() throws {
        let d = try APIDaemon()
        try d.start(launcher: ["/usr/bin/prlimit", "--nofile=64:64", "--"])
        let pid = d.daemon!.process.processIdentifier
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        for _ in 0..<80 { held.append(try d.client.open(sending: [])) }
        // Shed at its accept, before any request is read: the request is sent without minding
        // a pipe the server has closed already (a loaded machine once saw EPIPE here).
        let shed = try d.client.open(sending: [])
        let request = Array("GET /v1/status HTTP/1.1\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(shed, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(shed, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = recv(shed, &buffer, buffer.count, 0)
        close(shed)
        let answer = String(decoding: buffer.prefix(max(0, n)), as: UTF8.self)
        #expect(answer.hasPrefix("HTTP/1.1 503") && answer.contains("file descriptors"), "\(answer)")
        // The loop is not spinning: well under half a core over a second.
        let ticks = Self.cpuTicks(pid)
        usleep(1_000_000)
        let used = Self.cpuTicks(pid) - ticks
        #expect(used < Int(sysconf(Int32(_SC_CLK_TCK))) / 2, "\(used) ticks in one second")
        for fd in held { close(fd) }
        held = []
        let status = try d.waitForStatus("the API to serve again") { !$0.isEmpty }
        #expect(!status.isEmpty)
        #expect(d.daemon!.logs.contains { $0.isLog("api.refused", ["reason": "descriptors"]) })
        #expect(d.stop() == 0)
    }
}

/// Issue 25, item 5: a relay's batch is a little in the past; each record counts at its
/// own time, in the order it was heard.
@Suite(.serialized) struct RelayBatchTests {
    @Test func aBatchStampedInTheLastSecondsEntersTheRegion() throws {
        let d = try APIDaemon(
            extra: "clients: [{id: app, regions: [{id: till, uuid: \(APIDaemon.uuid), major: 7}]}]\n",
            monitoring: "enter_sightings: 3, exit_timeout: 30s")
        try d.start()
        // Twenty records stamped now-3 s ... now-1 s, sent newest first.
        let lines = (0..<20).map { i in APIDaemon.sighting(major: 7, clockAhead: -1 - Double(i) * 0.1) }
        try d.post(lines)
        // Unknown until then, the region is determined inside (taken all at one instant, the
        // twenty counted as one and it stayed unknown).
        let states = try d.waitForHistory("the region determined") { events in
            events.contains { $0["type"] as? String == "beacond.region.state" }
        }
        #expect(states.filter { $0["type"] as? String == "beacond.region.state" }.count == 1)
        let regions = try d.client.request("GET", "/v1/clients/app/regions").object["regions"] as? [[String: Any]]
        #expect(regions?.first?["state"] as? String == "inside", "\(regions ?? [])")
        #expect(d.stop() == 0)
    }
}

/// Issue 25, item 9: the API and relays use the config's id grammar, so no id can carry a
/// newline, a space or 5,000 characters into events, the state file or the log.
@Suite(.serialized) struct IdGrammarTests {
    @Test func idsTheConfigRefusesAreRefusedByTheAPIAndInRelaysRecords() throws {
        let d = try APIDaemon()
        try d.start()
        let body = "{\"uuid\": \"\(APIDaemon.uuid)\"}"
        for (client, region) in [
            ("a%0Ab", "x"), ("app", "two%20words"), ("app", String(repeating: "r", count: 5000)), ("app", "x%1B%5B31m"),
        ] {
            let put = try d.client.request("PUT", "/v1/clients/\(client)/regions/\(region)", body: body)
            #expect(put.status == 422 && put.body.contains("invalid_id"), "\(client)/\(region.prefix(20)): \(put.body)")
        }
        let clients = try d.client.request("GET", "/v1/clients").object["clients"] as? [[String: Any]] ?? []
        #expect(clients.isEmpty, "nothing was added: \(clients)")

        // A relay naming itself with a newline and an escape byte: its record is refused, and
        // no line of the log starts where the forged one would.
        var record = APIDaemon.sighting(major: 7)
        record = record.replacingOccurrences(of: "\"hci0\"", with: "\"relay\\nlevel=error event=forged \\u001b[31m\"")
        let post = try d.client.request("POST", "/v1/sightings", body: record + "\n")
        #expect(post.status == 422 && post.body.contains("receiver"), "\(post.body)")
        #expect(d.stop() == 0)
        #expect(!d.daemon!.logs.contains { $0.hasPrefix("level=error event=forged") || $0.contains("\u{1B}") })
        #expect(d.daemon!.logs.allSatisfy { (try? LogfmtReader.fields($0)) != nil }, "\(d.daemon!.logs)")
    }
}

/// Issue 25, item 7: `GET /v1/beacons` is paged, and built off the server's thread.
@Suite(.serialized) struct BeaconListingTests {
    @Test func theListingComesAPageAtATime() throws {
        let d = try APIDaemon()
        try d.start()
        try d.post((1...3).map { APIDaemon.sighting(major: $0) })
        _ = try d.waitForSightings(3)
        let first = try d.client.request("GET", "/v1/beacons?limit=2").object
        #expect((first["beacons"] as? [Any])?.count == 2 && first["total"] as? Int == 3 && first["next"] as? Int == 2)
        let second = try d.client.request("GET", "/v1/beacons?limit=2&offset=2").object
        #expect((second["beacons"] as? [Any])?.count == 1 && second["next"] is NSNull)
        #expect(try d.client.request("GET", "/v1/beacons?limit=0").status == 400)
        #expect(try d.client.request("GET", "/v1/beacons?offset=-1").status == 400)
        #expect(d.stop() == 0)
    }

    /// A relay posting 22,000 made-up beacons: the table stays at its limit, the evictions are
    /// counted in /metrics and logged once (then summed once a minute).
    @Test func aFloodOfMadeUpBeaconsIsBoundedCountedAndLogged() throws {
        let d = try APIDaemon()
        try d.start()
        for batch in 0..<5 {
            let lines = (0..<4400).map { i in
                APIDaemon.sighting(major: 1000 + batch, minor: i)
            }
            try d.post(lines)
        }
        _ = try d.waitForSightings(22_000, timeout: 30)
        let beacons = try d.client.request("GET", "/v1/beacons?limit=1").object
        #expect((beacons["total"] as? Int ?? .max) <= 20_000, "\(beacons["total"] ?? "")")
        let metrics = try d.client.request("GET", "/metrics").body
        let evicted = metrics.split(separator: "\n").first { $0.hasPrefix("beacond_beacons_evicted_total ") }
        #expect((evicted?.split(separator: " ").last.flatMap { Int($0) } ?? 0) >= 2000, "\(evicted ?? "")")
        #expect(d.stop() == 0)
        #expect(d.daemon!.logs.filter { $0.contains("beacons.evicted") }.count == 1)
    }
}

/// Two daemons on one state directory would deliver both outboxes twice and restore each
/// other's states: the second is refused, as a second daemon on the same socket is.
@Suite(.serialized) struct StateDirectoryLockTests {
    @Test func aSecondDaemonOnTheSameStateDirectoryIsRefused() throws {
        let first = try APIDaemon()
        try first.start()
        // Another config, another socket, the same state_dir.
        let dir = try Executables.temporaryDirectory()
        let config = dir.appendingPathComponent("second.yaml").path
        try """
        gateway: {id: second, state_dir: \(first.dir.appendingPathComponent("state").path)}
        api: {socket: \(dir.appendingPathComponent("second.sock").path)}

        """.write(toFile: config, atomically: true, encoding: .utf8)
        let second = try runCommand(
            Executables.built("beacond"), ["--config", config],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(dir.path)/no-bus", "PATH": "/usr/bin:/bin"])
        #expect(second.status == 69, "\(second.stderr)")
        #expect(
            second.stderr.contains("state.locked")
                && second.stderr.contains("holder_pid=\(first.daemon!.process.processIdentifier)"))
        #expect(first.stop() == 0)
        // The lock goes with the process, even at kill -9.
        try first.start()
        first.crash()
        try first.start()
        #expect(first.stop() == 0)
    }
}
