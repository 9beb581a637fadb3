import Foundation
import TestSupport
import Testing

/// SPEC §6: the gateways of one store meet on a real mosquitto. Each publishes what its own
/// receivers hear and takes the others', so every gateway's engine sees the whole store.
@Suite(.serialized) struct SiteTests {
    /// Two receivers on gw1, one on gw2; one tag; the same file on both gateways.
    static func site(_ broker: PrivateBroker) -> String {
        """
        site:
          id: store-1
          mqtt: {url: "\(broker.url)", keepalive: 5s}
        receivers:
          - {id: r1, gateway: gw1, adapter: hci0, position: {x: 0, y: 0}, rssi_at_1m: -59}
          - {id: r2, gateway: gw1, adapter: hci1, position: {x: 8, y: 0}, rssi_at_1m: -59}
          - {id: r3, gateway: gw2, adapter: hci0, position: {x: 4, y: 4}, rssi_at_1m: -59}
        assets:
          - {id: tag, beacon: {address: "D0:5E:00:00:00:01"}}
        simulation: {floor: {width: 8, depth: 4}, packet_loss: 0}

        """
    }

    /// The users of the locked-down broker (config/mosquitto/'s configuration and ACL, as
    /// docs/sites.md installs it): one per gateway, named as its id, and the consumer `wms`.
    static let passwords = ["gw1": "pw-gw1", "gw2": "pw-gw2", "gw3": "pw-gw3", "wms": "pw-wms"]

    static func lockedDownBroker() throws -> PrivateBroker {
        try PrivateBroker(users: passwords, lockedDown: true)
    }

    /// Gateway `id` with `config`, logged in as its own user when the broker has users.
    static func gatewayDaemon(_ id: String, on broker: PrivateBroker, _ config: String) throws -> APIDaemon {
        let dir = try Executables.temporaryDirectory()
        let secret = dir.appendingPathComponent("mqtt.secret")
        try (passwords[id] ?? "").write(to: secret, atomically: true, encoding: .utf8)
        let login =
            broker.users.isEmpty
            ? config
            : config.replacingOccurrences(
                of: "keepalive: 5s}", with: "keepalive: 5s, username: \(id), password_file: \(secret.path)}")
        return try APIDaemon(extra: login, dir: dir, gatewayID: id)
    }

    static func gateway(_ status: [String: Any], _ id: String) -> [String: Any]? {
        ((status["site"] as? [String: Any])?["gateways"] as? [[String: Any]])?.first { $0["id"] as? String == id }
    }

    static func site(_ status: [String: Any]) -> [String: Any] { status["site"] as? [String: Any] ?? [:] }

    /// A process's peak resident memory (`VmHWM`), in bytes.
    static func peakRSS(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        return (Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0) * 1024
    }

    /// On the shipped locked-down broker (SPEC §6.3: the tests run the site on its ACL).
    @Test func eachGatewaysEngineHearsTheOthersReceiversAndAWillSaysWhoDied() throws {
        let broker = try Self.lockedDownBroker()
        let gw1 = try Self.gatewayDaemon("gw1", on: broker, Self.site(broker))
        let gw2 = try Self.gatewayDaemon("gw2", on: broker, Self.site(broker))
        try gw1.start(arguments: ["--simulate", "--no-print-events"])
        try gw2.start(arguments: ["--simulate", "--no-print-events"])

        // gw2 plays only r3; r1's and r2's sightings reach its engine through the broker.
        let status = try gw2.waitForStatus("gw1's batches on gw2", timeout: 15) {
            (Self.gateway($0, "gw1")?["batches"] as? Int ?? 0) >= 3
                && (Self.site($0)["sightings_received"] as? Int ?? 0) > 0
        }
        #expect(Self.gateway(status, "gw1")?["online"] as? Bool == true)
        #expect(Self.gateway(status, "gw1")?["lost"] as? Int == 0)
        #expect((Self.site(status)["broker"] as? [String: Any])?["connected"] as? Bool == true)
        let sent = try gw1.waitForStatus("gw1's batches out") { (Self.site($0)["batches_sent"] as? Int ?? 0) >= 3 }
        #expect(Self.gateway(sent, "gw2")?["online"] as? Bool == true)
        // gw2's engine places the tag with gw1's receivers and its own.
        var used: Set<String> = []
        try eventually("gw2 to place the tag with r1, r2 and r3", timeout: 15, detail: { "used \(used)" }) {
            let assets = try gw2.client.request("GET", "/v1/assets").object["assets"] as? [[String: Any]] ?? []
            let position = assets.first?["position"] as? [String: Any]
            used = Set(position?["receivers_used"] as? [String] ?? [])
            return used == ["r1", "r2", "r3"]
        }
        #expect(try broker.retained("beacond/store-1/gateways/gw1/status") == "online")
        let ctl = try runCommand(Executables.built("beaconctl"), ["--socket", gw2.socketPath, "status"])
        #expect(ctl.stdout.contains("site      store-1 on \(broker.url): connected, 0 reconnects"), "\(ctl.stdout)")
        #expect(
            ctl.stdout.split(separator: "\n").contains { $0.hasPrefix("gw1") && $0.contains(" yes ") }, "\(ctl.stdout)")
        let metrics = try gw2.client.request("GET", "/metrics").body
        #expect(metrics.contains("beacond_mqtt_connected 1"))
        #expect(metrics.contains(#"beacond_site_batches_received_total{gateway="gw1"}"#))

        // kill -9: no clean stop; the broker's last will tells the site.
        gw1.crash()
        try gw2.waitForStatus("gw1 offline by its will", timeout: 15) {
            Self.gateway($0, "gw1")?["online"] as? Bool == false
        }
        #expect(try broker.retained("beacond/store-1/gateways/gw1/status") == "offline")
        #expect(gw2.stop() == 0)
        // A clean stop says offline itself.
        #expect(try broker.retained("beacond/store-1/gateways/gw2/status") == "offline")
    }

    @Test func whatOthersPublishBadlyIsCountedAndTheRestTaken() throws {
        let broker = try PrivateBroker()
        let gw2 = try APIDaemon(extra: Self.site(broker), gatewayID: "gw2")
        try gw2.start(arguments: ["--no-print-events"])
        try gw2.waitForStatus("connected") {
            (Self.site($0)["broker"] as? [String: Any])?["connected"] as? Bool == true
        }
        let prefix = "beacond/store-1/sightings/"
        let now = Date().timeIntervalSince1970
        let record = #"{"t":\#(now),"receiver":"r1","address":"D0:5E:00:00:00:01","rssi":-61}"#
        try broker.publish(prefix + "gw1", "not json at all")
        try broker.publish(prefix + "gw9", #"{"batch":1,"gateway":"gw9","seq":1,"sent":\#(now)}"# + "\n" + record)
        try broker.publish(prefix + "gw1", record.replacingOccurrences(of: "\"r1\"", with: "\"r-unknown\""))
        // 20 MiB: the gateway asked the broker (MQTT 5's Maximum Packet Size) to send nothing
        // over its limit, so the broker drops it and the gateway's memory never holds it.
        let pid = gw2.daemon!.process.processIdentifier
        let peakBefore = try Self.peakRSS(pid)
        let flood = gw2.dir.appendingPathComponent("flood")
        try Data(repeating: 0x7B, count: 20 << 20).write(to: flood)
        try broker.publish(prefix + "gw1", file: flood)
        // An ESP32's plain line, after all that, is still taken.
        try broker.publish(prefix + "esp32-door", record)
        let status = try gw2.waitForStatus("the plain line taken") {
            (Self.site($0)["sightings_received"] as? Int ?? 0) == 1
        }
        let dropped = Self.site(status)["dropped"] as? [String: Int] ?? [:]
        #expect(dropped == ["malformed": 1, "unknown_gateway": 1, "unknown_receiver": 1], "\(dropped)")
        let grown = try Self.peakRSS(pid) - peakBefore
        #expect(grown < 8 << 20, "the peak RSS grew by \(grown >> 20) MiB with a 20 MiB message")
        #expect(gw2.daemon!.logs.contains { $0.isLog("site.batch_problem") })
        #expect(gw2.stop() == 0)
    }

    @Test func aBrokerThatRestartsIsFoundAgain() throws {
        let broker = try PrivateBroker()
        let gw1 = try APIDaemon(extra: Self.site(broker), gatewayID: "gw1")
        try gw1.start(arguments: ["--simulate", "--no-print-events"])
        try gw1.waitForStatus("connected") { (Self.site($0)["batches_sent"] as? Int ?? 0) > 0 }
        broker.stop()
        try gw1.waitForStatus("disconnected") {
            (Self.site($0)["broker"] as? [String: Any])?["connected"] as? Bool == false
        }
        try broker.start()
        let back = try gw1.waitForStatus("reconnected", timeout: 20) {
            let b = Self.site($0)["broker"] as? [String: Any]
            return b?["connected"] as? Bool == true && b?["reconnects"] as? Int == 1
        }
        let sentBefore = Self.site(back)["batches_sent"] as? Int ?? 0
        try gw1.waitForStatus("batches again") { (Self.site($0)["batches_sent"] as? Int ?? 0) > sentBefore }
        #expect(try broker.retained("beacond/store-1/gateways/gw1/status") == "online")
        #expect(gw1.daemon!.logs.contains { $0.isLog("mqtt.disconnected") })
        #expect(gw1.stop() == 0)
    }

    /// `beaconctl doctor` logs in to the broker as the daemon would: name, port, credentials.
    @Test func doctorChecksTheBrokerLoginWithTheFix() throws {
        let broker = try PrivateBroker(users: ["gw1": "right"])
        let d = try APIDaemon(gatewayID: "gw1")
        let secret = d.dir.appendingPathComponent("mqtt.secret")
        func doctor(_ password: String) throws -> String {
            try (password + "\n").write(to: secret, atomically: true, encoding: .utf8)
            try d.rewrite(
                extra: Self.site(broker).replacingOccurrences(
                    of: "keepalive: 5s}", with: "keepalive: 5s, username: gw1, password_file: \(secret.path)}"))
            let out = try runCommand(
                Executables.built("beaconctl"), ["--socket", d.socketPath, "doctor", "--config", d.configPath])
            return out.stdout
        }
        #expect(try doctor("right").contains("[ok] broker: \(broker.url) accepts this gateway's login"))
        let refused = try doctor("wrong")
        #expect(refused.contains("[FAIL] broker: \(broker.url): refused: Not authorized"), "\(refused)")
        #expect(refused.contains("fix: check site.mqtt.username and the password in \(secret.path)"), "\(refused)")
        broker.stop()
        let down = try doctor("right")
        #expect(down.contains("[FAIL] broker: \(broker.url): 127.0.0.1:\(broker.port): Connection refused"), "\(down)")
    }

    /// SPEC §6.3: the higher priority is the locator; killed, the next takes over within 10 s
    /// with the next epoch, announced on the retained `locator` topic. On the shipped
    /// locked-down broker; gw3, a relay with no receiver, is named in `site.gateways`.
    @Test func theLocatorIsChosenByPriorityAndTheNextTakesOverWhenItDies() throws {
        let broker = try Self.lockedDownBroker()
        func config(priority: Int) -> String {
            Self.site(broker).replacingOccurrences(
                of: "  id: store-1\n", with: "  id: store-1\n  locator_priority: \(priority)\n  gateways: [gw3]\n")
        }
        let gw1 = try Self.gatewayDaemon("gw1", on: broker, config(priority: 100))
        let gw2 = try Self.gatewayDaemon("gw2", on: broker, config(priority: 50))
        let relay = try Self.gatewayDaemon(
            "gw3", on: broker,
            config(priority: 500).replacingOccurrences(of: "  id: store-1\n", with: "  id: store-1\n  locator: false\n")
        )
        try gw1.start(arguments: ["--no-print-events"])
        try gw2.start(arguments: ["--no-print-events"])
        try relay.start(arguments: ["--no-print-events"])
        func locator(_ d: APIDaemon) throws -> [String: Any]? {
            Self.site(try d.client.request("GET", "/v1/status").object)["locator"] as? [String: Any]
        }
        try gw2.waitForStatus("gw1 announced") {
            (Self.site($0)["locator"] as? [String: Any])?["gateway"] as? String == "gw1"
        }
        #expect(try locator(gw2)?["this_gateway"] as? Bool == false)
        try gw1.waitForStatus("gw1 the locator") {
            (Self.site($0)["locator"] as? [String: Any])?["this_gateway"] as? Bool == true
        }
        // A relay-only gateway never takes the role, though its priority is the highest.
        try relay.waitForStatus("the relay sees gw1") {
            (Self.site($0)["locator"] as? [String: Any])?["gateway"] as? String == "gw1"
        }
        let epoch = try #require(try locator(gw1)?["epoch"] as? Int)
        #expect(try broker.retained("beacond/store-1/locator")?.contains(#""gateway":"gw1""#) == true)
        #expect(try gw1.client.request("GET", "/metrics").body.contains("beacond_site_locator 1"))

        let killed = Date()
        gw1.crash()
        try gw2.waitForStatus("gw2 takes over", timeout: 10) {
            let l = Self.site($0)["locator"] as? [String: Any]
            return l?["gateway"] as? String == "gw2" && l?["this_gateway"] as? Bool == true
        }
        let took = Date().timeIntervalSince(killed)
        #expect(took < 10, "took \(took) s")
        print("locator fail-over after kill -9: \(took) s")
        #expect(try locator(gw2)?["epoch"] as? Int == epoch + 1)
        #expect(try broker.retained("beacond/store-1/locator")?.contains(#""gateway":"gw2""#) == true)
        #expect(gw2.daemon!.logs.contains { $0.isLog("site.locator", ["role": "locator", "locator": "gw2"]) })
        try relay.waitForStatus("the relay follows") {
            (Self.site($0)["locator"] as? [String: Any])?["gateway"] as? String == "gw2"
        }
        #expect(gw2.stop() == 0 && relay.stop() == 0)
    }

    /// A gateway that hangs or loses power closes no connection: the broker finds it silent
    /// after 1.5 × keepalive (5 s by default) and sends its will, and the next takes over,
    /// still within 10 s. Woken again, the higher priority takes the role back, a new epoch.
    @Test func aFrozenLocatorIsReplacedWithinTenSecondsAndTakesTheRoleBack() throws {
        let broker = try PrivateBroker()
        func config(priority: Int) -> String {
            Self.site(broker).replacingOccurrences(
                of: "  id: store-1\n", with: "  id: store-1\n  locator_priority: \(priority)\n"
            )
            .replacingOccurrences(of: ", keepalive: 5s", with: "")
        }
        let gw1 = try APIDaemon(extra: config(priority: 100), gatewayID: "gw1")
        let gw2 = try APIDaemon(extra: config(priority: 50), gatewayID: "gw2")
        try gw1.start(arguments: ["--no-print-events"])
        try gw2.start(arguments: ["--no-print-events"])
        func locator(_ status: [String: Any]) -> [String: Any]? { Self.site(status)["locator"] as? [String: Any] }
        try gw2.waitForStatus("gw1 announced") { locator($0)?["gateway"] as? String == "gw1" }
        let pid = gw1.daemon!.process.processIdentifier
        let frozen = Date()
        kill(pid, SIGSTOP)
        let status = try gw2.waitForStatus("gw2 takes over", timeout: 12) {
            locator($0)?["gateway"] as? String == "gw2" && locator($0)?["this_gateway"] as? Bool == true
        }
        let took = Date().timeIntervalSince(frozen)
        print("locator fail-over after SIGSTOP (silent for 4 s): \(took) s")
        #expect(took < 10, "took \(took) s")
        let epoch = locator(status)?["epoch"] as? Int ?? 0
        kill(pid, SIGCONT)
        let back = try gw2.waitForStatus("gw1 back as the locator", timeout: 15) {
            locator($0)?["gateway"] as? String == "gw1" && locator($0)?["epoch"] as? Int ?? 0 > epoch
        }
        // Taken back with one announcement, not traded back and forth (a woken gateway
        // announces before its next batch: the announcement itself says it is alive), and
        // settled: the role stays with gw1.
        let settled = locator(back)?["epoch"] as? Int ?? 0
        print("locator taken back at epoch \(settled) (gw2 took over at \(epoch))")
        #expect(settled == epoch + 1)
        sleep(3)
        let later = locator(try gw2.client.request("GET", "/v1/status").object)
        #expect(later?["gateway"] as? String == "gw1" && later?["epoch"] as? Int == settled)
        #expect(try broker.retained("beacond/store-1/gateways/gw1/status") == "online")
        #expect(gw1.stop() == 0 && gw2.stop() == 0)
    }

    /// SPEC §6.3 and §4.4: only the locator delivers the site's webhooks. Positions are state,
    /// not handed over: the standby keeps none of them (its outbox stays empty), and when the
    /// locator dies it sends the latest from then on, not a backlog. (Alerts are handed over
    /// without a gap: `SiteHandOverTests`, `SiteFailoverDeliveryTests`.)
    @Test func onlyTheLocatorDeliversAndTheNextSendsTheLatestPositionsNotABacklog() throws {
        let broker = try PrivateBroker()
        let receiver = try WebhookReceiver()
        func config(priority: Int) -> String {
            Self.site(broker).replacingOccurrences(
                of: "  id: store-1\n", with: "  id: store-1\n  locator_priority: \(priority)\n")
                + "positioning: {publish_interval: 1s, min_move: 0}\n"
                + "webhooks:\n  - {id: crm, url: \"\(receiver.url)\", events: [asset.position]}\n"
        }
        let gw1 = try APIDaemon(extra: config(priority: 100), gatewayID: "gw1")
        let gw2 = try APIDaemon(extra: config(priority: 50), gatewayID: "gw2")
        try gw1.start(arguments: ["--simulate", "--no-print-events"])
        try gw2.start(arguments: ["--simulate", "--no-print-events"])
        // Every event of a site says the site as its source; the gateway that sent is in a header.
        func delivered(by gateway: String) -> [[String: Any]] {
            receiver.requests.filter { ($0["headers"] as? [String: Any])?["x-beacond-gateway"] as? String == gateway }
                .flatMap { $0["events"] as? [[String: Any]] ?? [] }
        }
        try receiver.waitUntil("gw1's deliveries", timeout: 30) { _ in delivered(by: "gw1").count >= 12 }
        // gw2 makes the same positions, keeps none, and sends none while gw1 is the locator.
        let standing = try gw2.client.request("GET", "/v1/status").object
        let hook = (standing["webhooks"] as? [[String: Any]])?.first
        #expect(hook?["pending"] as? Int == 0 && hook?["positions_waiting"] as? Int == 0, "\(hook ?? [:])")
        #expect(delivered(by: "gw2").isEmpty)
        gw1.crash()
        let lastOfGw1 = delivered(by: "gw1").compactMap { $0["time"] as? String }.max() ?? ""
        try receiver.waitUntil("gw2's deliveries", timeout: 15) { _ in delivered(by: "gw2").count >= 3 }
        let times = delivered(by: "gw2").compactMap { $0["time"] as? String }.sorted()
        // The latest from the take-over on: nothing from before gw1's last delivery, and no more
        // than the take-over's 10 s after it.
        let earliest = try #require(Self.seconds(times.first!)), last = try #require(Self.seconds(lastOfGw1))
        #expect(earliest >= last - 1, "gw2 sent a position of \(times.first!), gw1 had delivered \(lastOfGw1)")
        #expect(earliest - last < 12, "gw2 from \(times.first!), gw1 through \(lastOfGw1)")
        #expect(gw2.stop() == 0)
    }

    /// Seconds of the day of an RFC 3339 time like 2026-11-26T01:50:00.123Z.
    static func seconds(_ time: String) -> Double? {
        let clock = time.split(separator: "T").last?.dropLast().split(separator: ":") ?? []
        guard clock.count == 3, let h = Double(clock[0]), let m = Double(clock[1]), let s = Double(clock[2]) else {
            return nil
        }
        return h * 3600 + m * 60 + s
    }

    /// `mqtts://` with the site's CA file: connected, and doctor's login passes; without it
    /// (the system's CAs do not know the test CA) the certificate is refused, and said so.
    @Test func aTLSBrokerIsReachedWithItsCAAndRefusedWithout() throws {
        let broker = try PrivateBroker(tls: true)
        let ca = try #require(broker.caFile)
        let withCA = Self.site(broker).replacingOccurrences(
            of: "keepalive: 5s}", with: "keepalive: 5s, ca_file: \(ca)}")
        let d = try APIDaemon(extra: withCA, gatewayID: "gw1")
        try d.start(arguments: ["--no-print-events"])
        try d.waitForStatus("connected over TLS") {
            (Self.site($0)["broker"] as? [String: Any])?["connected"] as? Bool == true
        }
        let doctor = try runCommand(
            Executables.built("beaconctl"), ["--socket", d.socketPath, "doctor", "--config", d.configPath])
        #expect(
            doctor.stdout.contains("[ok] broker: \(broker.url) accepts this gateway's login over TLS"),
            "\(doctor.stdout)")
        #expect(d.stop() == 0)

        try d.rewrite(extra: Self.site(broker))
        try d.start(arguments: ["--no-print-events"])
        let refused = try d.waitForStatus("refused without the CA") {
            (Self.site($0)["broker"] as? [String: Any])?["last_error"] is String
        }
        #expect((Self.site(refused)["broker"] as? [String: Any])?["connected"] as? Bool == false)
        #expect(d.daemon!.logs.contains { $0.isLog("mqtt.disconnected") })
        let failed = try runCommand(
            Executables.built("beaconctl"), ["--socket", d.socketPath, "doctor", "--config", d.configPath])
        #expect(failed.stdout.contains("[FAIL] broker: \(broker.url)"), "\(failed.stdout)")
        #expect(failed.stdout.contains("signed by a CA in /etc/ssl/certs"), "\(failed.stdout)")
        #expect(d.stop() == 0)
    }
}
