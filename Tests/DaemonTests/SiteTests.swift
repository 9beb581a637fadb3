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

    static func gateway(_ status: [String: Any], _ id: String) -> [String: Any]? {
        ((status["site"] as? [String: Any])?["gateways"] as? [[String: Any]])?.first { $0["id"] as? String == id }
    }

    static func site(_ status: [String: Any]) -> [String: Any] { status["site"] as? [String: Any] ?? [:] }

    @Test func eachGatewaysEngineHearsTheOthersReceiversAndAWillSaysWhoDied() throws {
        let broker = try PrivateBroker()
        let gw1 = try APIDaemon(extra: Self.site(broker), gatewayID: "gw1")
        let gw2 = try APIDaemon(extra: Self.site(broker), gatewayID: "gw2")
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
        let deadline = Date().addingTimeInterval(15)
        var used: Set<String> = []
        while Date() < deadline, used != ["r1", "r2", "r3"] {
            let assets = try gw2.client.request("GET", "/v1/assets").object["assets"] as? [[String: Any]] ?? []
            let position = assets.first?["position"] as? [String: Any]
            used = Set(position?["receivers_used"] as? [String] ?? [])
            usleep(50_000)
        }
        #expect(used == ["r1", "r2", "r3"])
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
        let flood = gw2.dir.appendingPathComponent("flood")
        try Data(repeating: 0x7B, count: 2 << 20).write(to: flood)
        try broker.publish(prefix + "gw1", file: flood)
        // An ESP32's plain line, after all that, is still taken.
        try broker.publish(prefix + "esp32-door", record)
        let status = try gw2.waitForStatus("the plain line taken") {
            (Self.site($0)["sightings_received"] as? Int ?? 0) == 1
        }
        let dropped = Self.site(status)["dropped"] as? [String: Int] ?? [:]
        #expect(dropped == ["malformed": 1, "unknown_gateway": 1, "unknown_receiver": 1, "too_large": 1], "\(dropped)")
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
}
