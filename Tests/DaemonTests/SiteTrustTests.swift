import Foundation
import TestSupport
import Testing

/// SPEC §6.3, "the broker is the site's trust boundary": what a client that is no gateway
/// publishes on an open broker (no ACL: the worst case) cannot silence the site's alerts or
/// move its locator, and what the broker refuses is not counted as sent.
@Suite(.serialized) struct SiteTrustTests {
    /// SiteTests' two gateways with a webhook for positions (one a second) and for the zone
    /// alerts of eight strips a metre wide across the floor: the tag walking, and its estimate
    /// wandering, crosses one every few seconds — alerts, which wait in the outbox (positions
    /// do not: SPEC §4.4).
    static func config(_ broker: PrivateBroker, receiver: WebhookReceiver, priority: Int) -> String {
        let strips = (0..<8).map {
            "  - {id: z\($0), level: 0, polygon: [[\($0), 0], [\($0 + 1), 0], [\($0 + 1), 4], [\($0), 4]]}\n"
        }
        return SiteTests.site(broker).replacingOccurrences(
            of: "  id: store-1\n", with: "  id: store-1\n  locator_priority: \(priority)\n")
            + "positioning: {publish_interval: 1s, min_move: 0}\n"
            + "zones:\n" + strips.joined()
            + "alarms:\n  - {id: strips, zones: [\((0..<8).map { "z\($0)" }.joined(separator: ", "))], on: [enter, exit], confirm: 0s}\n"
            + "webhooks:\n  - {id: crm, url: \"\(receiver.url)\", events: [asset.position, zone.*]}\n"
    }

    static func hook(_ status: [String: Any], _ id: String = "crm") -> [String: Any] {
        (status["webhooks"] as? [[String: Any]] ?? []).first { $0["id"] as? String == id } ?? [:]
    }

    static func dropped(_ status: [String: Any], _ reason: String) -> Int {
        (SiteTests.site(status)["dropped"] as? [String: Any])?[reason] as? Int ?? 0
    }

    /// Issue 38 #1: one retained `{"through": now + 1 year}` emptied every standby's outbox,
    /// so a failover lost what the locator had not delivered. Marks too far ahead, and marks
    /// from a gateway the site file does not name, are refused and counted; the standby keeps
    /// the events, and delivers them when it takes over.
    @Test func aForgedDeliveredMarkEmptiesNoStandbysOutbox() throws {
        let broker = try PrivateBroker()
        // The receiver is down: the locator delivers nothing, so the standby must keep it all.
        let receiver = try WebhookReceiver(fail: 100_000)
        let gw1 = try APIDaemon(extra: Self.config(broker, receiver: receiver, priority: 100), gatewayID: "gw1")
        let gw2 = try APIDaemon(extra: Self.config(broker, receiver: receiver, priority: 50), gatewayID: "gw2")
        try gw1.start(arguments: ["--simulate", "--no-print-events"])
        try gw2.start(arguments: ["--simulate", "--no-print-events"])
        try gw2.waitForStatus("gw2 keeps gw1's undelivered alerts", timeout: 20) {
            (Self.hook($0)["pending"] as? Int ?? 0) >= 3
        }
        let year = Date().timeIntervalSince1970 + 365 * 86400
        for topic in ["delivered/crm", "gateways/gw1/delivered/crm", "gateways/gw9/delivered/crm"] {
            try broker.publish("beacond/store-1/" + topic, "{\"through\":\(year)}", retain: true)
        }
        let refused = try gw2.waitForStatus("the forged marks refused") {
            Self.dropped($0, "bad_delivered") >= 1 && Self.dropped($0, "unknown_gateway") >= 1
        }
        let before = Self.hook(refused)["pending"] as? Int ?? 0
        // Two seconds of standing by (it prunes every second): nothing dropped, more kept.
        usleep(2_500_000)
        let after = Self.hook(try gw2.client.request("GET", "/v1/status").object)
        #expect((after["pending"] as? Int ?? 0) >= before, "gw2 dropped \(before) → \(after["pending"] ?? 0)")
        // Taking over, gw2 tries to deliver what gw1 never did, from the start.
        gw1.crash()
        try gw2.waitForStatus("gw2 delivering", timeout: 15) { (Self.hook($0)["failed_requests"] as? Int ?? 0) >= 1 }
        #expect((Self.hook(try gw2.client.request("GET", "/v1/status").object)["pending"] as? Int ?? 0) >= before)
        #expect(gw2.stop() == 0)
    }

    /// Issue 38 #2: one retained `offline` per gateway (or a phantom top-priority gateway and
    /// its announcement) left the site with no locator: no alert delivered. Each gateway puts
    /// its own status right, and a gateway the site file does not name takes no part.
    @Test func forgedOfflinesAndAPhantomLocatorLeaveTheSiteItsLocator() throws {
        let broker = try PrivateBroker()
        let receiver = try WebhookReceiver()
        let p = "beacond/store-1/"
        try broker.publish(p + "gateways/gw0/status", "online", retain: true)
        try broker.publish(p + "gateways/gw0/info", "{\"locator\":true,\"priority\":1000}", retain: true)
        try broker.publish(
            p + "locator", "{\"gateway\":\"gw0\",\"epoch\":41,\"since\":\"2026-01-01T00:00:00Z\"}", retain: true)
        let gw1 = try APIDaemon(extra: Self.config(broker, receiver: receiver, priority: 100), gatewayID: "gw1")
        let gw2 = try APIDaemon(extra: Self.config(broker, receiver: receiver, priority: 50), gatewayID: "gw2")
        try gw1.start(arguments: ["--simulate", "--no-print-events"])
        try gw2.start(arguments: ["--simulate", "--no-print-events"])
        try gw2.waitForStatus("gw2 sees gw1 as the locator", timeout: 15) {
            (SiteTests.site($0)["locator"] as? [String: Any])?["gateway"] as? String == "gw1"
        }
        // Both gateways said offline in their names, retained, as the forger's last word.
        try broker.publish(p + "gateways/gw1/status", "offline", retain: true)
        try broker.publish(p + "gateways/gw2/status", "offline", retain: true)
        let delivered = receiver.requests.count
        try receiver.waitUntil("deliveries after the forgery", timeout: 10) { $0.count >= delivered + 3 }
        let status = try gw2.waitForStatus("gw1 online again in gw2's eyes") { s in
            let gateways = SiteTests.site(s)["gateways"] as? [[String: Any]] ?? []
            return gateways.first { $0["id"] as? String == "gw1" }?["online"] as? Bool == true
        }
        let locator = SiteTests.site(try gw1.client.request("GET", "/v1/status").object)["locator"] as? [String: Any]
        #expect(locator?["gateway"] as? String == "gw1" && locator?["this_gateway"] as? Bool == true)
        #expect(Self.dropped(status, "unknown_gateway") >= 1)
        #expect(try broker.retained(p + "gateways/gw1/status") == "online")
        #expect(try broker.retained(p + "gateways/gw2/status") == "online")
        #expect(gw1.stop() == 0)
        #expect(gw2.stop() == 0)
    }

    /// Issue 38 #3: with an ACL that denies `events/#`, mosquitto answered each PUBACK with
    /// 0x87 and beacond counted the events as delivered. A refusal is a failure: the events
    /// stay in the outbox, and the reason is in the status, the log and `/metrics`.
    @Test func aPublishTheBrokerRefusesIsNotDelivered() throws {
        let acl = try Executables.temporaryDirectory().appendingPathComponent("acl")
        // gw1 may say who it is, send sightings and announce itself; not publish events.
        let rules =
            "user gw1\ntopic readwrite beacond/store-1/gateways/#\ntopic readwrite beacond/store-1/sightings/#\n"
            + "topic readwrite beacond/store-1/locator\n"
        try rules.write(to: acl, atomically: true, encoding: .utf8)
        chmod(acl.path, 0o644)
        chmod(acl.deletingLastPathComponent().path, 0o755)
        let broker = try PrivateBroker(users: ["gw1": "secret-1"], extra: "acl_file \(acl.path)\n")
        let dir = try Executables.temporaryDirectory()
        let secret = dir.appendingPathComponent("mqtt.secret")
        try "secret-1".write(to: secret, atomically: true, encoding: .utf8)
        let gw1 = try APIDaemon(
            extra: SiteOutputTests.site(broker).replacingOccurrences(
                of: "keepalive: 5s}", with: "keepalive: 5s, username: gw1, password_file: \(secret.path)}"),
            dir: dir, gatewayID: "gw1")
        try gw1.start()
        try SiteOutputTests.walk(gw1, to: (2, 5), until: "zone.enter") { !SiteOutputTests.zoneEvents($0).isEmpty }
        let status = try gw1.waitForStatus("the refusal in the status") { s in
            (Self.hook(s, "mqtt:events")["last_error"] as? String ?? "").lowercased().contains("not authorized")
        }
        let events = Self.hook(status, "mqtt:events")
        #expect((events["pending"] as? Int ?? 0) >= 1 && events["delivered"] as? Int == 0, "\(events)")
        let refused = (SiteTests.site(status)["broker"] as? [String: Any])?["publish_refused"] as? [String: Any]
        #expect(refused?.keys.contains { $0.lowercased().contains("not authorized") } == true, "\(refused ?? [:])")
        let metrics = try gw1.client.request("GET", "/metrics").body
        #expect(metrics.contains("beacond_mqtt_publish_refused_total{reason=\"Not authorized (0x87)\"}"))
        #expect(gw1.stop() == 0)
        #expect(gw1.daemon!.logs.contains { $0.contains("mqtt.publish_refused") })
    }

    /// Issue 38 #19: a forged retained asset state (and Home Assistant config) stayed on the
    /// broker. The locator sends its own again within a second or two.
    @Test func theLocatorPutsItsOwnRetainedTopicsRight() throws {
        let broker = try PrivateBroker()
        let gw1 = try APIDaemon(extra: SiteOutputTests.site(broker, homeAssistant: true), gatewayID: "gw1")
        try gw1.start()
        try SiteOutputTests.walk(gw1, to: (2, 5), until: "zone.enter") { !SiteOutputTests.zoneEvents($0).isEmpty }
        let state = "beacond/store-1/assets/pallet-9/state"
        let config = "homeassistant/device_tracker/beacond_store-1_pallet-9/config"
        try eventually("the pallet's state retained", every: 0.1) { try broker.retained(state) == "dock" }
        let ours = try #require(try broker.retained(config))
        try broker.publish(state, "stockroom", retain: true)
        try broker.publish(config, "{\"name\":\"forged\"}", retain: true)
        try? eventually("the locator to put its topics right", timeout: 5, every: 0.1) {
            try broker.retained(state) == "dock" && broker.retained(config) == ours
        }
        #expect(try broker.retained(state) == "dock")
        #expect(try broker.retained(config) == ours)
        #expect(gw1.stop() == 0)
    }

    /// Issue 38 #4 and #8 on the shipped ACL: a consumer cannot publish a batch under a
    /// gateway's id (placing a tag), nor a gateway say `offline`, `delivered` or `decided` in
    /// another's name: the broker refuses each (MQTT 5 reason 0x87), and the site never sees it.
    @Test func theShippedACLLetsNoOneWriteInAnotherGatewaysName() throws {
        let broker = try SiteTests.lockedDownBroker()
        let gw2 = try SiteTests.gatewayDaemon("gw2", on: broker, SiteTests.site(broker))
        try gw2.start(arguments: ["--no-print-events"])
        try gw2.waitForStatus("connected") {
            (SiteTests.site($0)["broker"] as? [String: Any])?["connected"] as? Bool == true
        }
        let now = Date().timeIntervalSince1970
        let batch =
            #"{"batch":1,"gateway":"gw1","seq":1,"sent":\#(now)}"# + "\n"
            + #"{"t":\#(now),"receiver":"r1","address":"D0:5E:00:00:00:01","rssi":-40}"#
        for (topic, payload, user) in [
            ("beacond/store-1/sightings/gw1", batch, "wms"),
            ("beacond/store-1/sightings/gw1", batch, "gw3"),
            ("beacond/store-1/gateways/gw2/status", "offline", "gw1"),
            ("beacond/store-1/gateways/gw1/delivered/crm", "{\"through\":9999999999}", "gw3"),
            ("beacond/store-1/gateways/gw1/decided", "x", "wms"),
        ] {
            let sent = try broker.publish(topic, payload, as: user)
            #expect(
                sent.stdout.contains("135") || sent.stderr.contains("135"),
                "\(user) on \(topic): \(sent.stdout)\(sent.stderr)")
        }
        usleep(500_000)
        let status = try gw2.client.request("GET", "/v1/status").object
        #expect(SiteTests.site(status)["sightings_received"] as? Int == 0)
        #expect(try broker.retained("beacond/store-1/gateways/gw2/status") == "online")
        #expect(gw2.stop() == 0)
    }
}
