import Foundation
import TestSupport
import Testing

/// SPEC §6.3 with the site's receivers all on other gateways: what arrives over the broker
/// places assets as a single process with the same receivers does, and a locator killed with
/// an asset inside a zone hands over without entering it again and without missing its exit.
@Suite(.serialized) struct SiteRemoteReceiverTests {
    /// AssetAPITests' floor, its receivers on gateways gwa (r1, r2) and gwb (r3, r4), which
    /// the test plays by publishing JSON Lines as a foreign relay (an ESP32) would; gw1 and
    /// gw2, with no radio, are named as the site's gateways (`site.gateways`).
    static func site(_ broker: PrivateBroker, priority: Int = 100) -> String {
        """
        site:
          id: store-1
          mqtt: {url: "\(broker.url)", keepalive: 5s}
          locator_priority: \(priority)
          gateways: [gw1, gw2]

        """
            + AssetAPITests.site
            .replacingOccurrences(of: "{id: r1, ", with: "{id: r1, gateway: gwa, adapter: hci0, ")
            .replacingOccurrences(of: "{id: r2, ", with: "{id: r2, gateway: gwa, adapter: hci1, ")
            .replacingOccurrences(of: "{id: r3, ", with: "{id: r3, gateway: gwb, adapter: hci0, ")
            .replacingOccurrences(of: "{id: r4, ", with: "{id: r4, gateway: gwb, adapter: hci1, ")
    }

    /// One round of the pallet's sightings at `at`: r1 and r2 on `sightings/gwa`, r3 and r4 on
    /// `sightings/gwb`; the same four lines are returned for a single process.
    @discardableResult
    static func hear(on broker: PrivateBroker, at: (x: Double, y: Double)) throws -> [String] {
        let lines = AssetAPITests.sightings(at: at)
        try broker.publish("beacond/store-1/sightings/gwa", lines[0] + "\n" + lines[1])
        try broker.publish("beacond/store-1/sightings/gwb", lines[2] + "\n" + lines[3])
        return lines
    }

    static func position(_ d: APIDaemon) throws -> (x: Double, y: Double, used: Set<String>)? {
        let asset = try d.client.request("GET", "/v1/assets/pallet-9").object
        guard let p = asset["position"] as? [String: Any], let x = p["x"] as? Double, let y = p["y"] as? Double else {
            return nil
        }
        return (x, y, Set(p["receivers_used"] as? [String] ?? []))
    }

    @Test func positionsFromOtherGatewaysEqualThoseOfOneProcess() throws {
        let broker = try PrivateBroker()
        let gw1 = try APIDaemon(extra: Self.site(broker), gatewayID: "gw1")
        let alone = try APIDaemon(extra: AssetAPITests.site)
        try gw1.start()
        try alone.start()
        for _ in 0..<16 {
            try alone.post(try Self.hear(on: broker, at: (3, 6)))
            usleep(250_000)
        }
        var site = try Self.position(gw1)
        try? eventually("gw1 to use four receivers", every: 0.1) {
            site = try Self.position(gw1)
            return site?.used.count == 4
        }
        let one = try #require(try Self.position(alone))
        let here = try #require(site)
        #expect(here.used == ["r1", "r2", "r3", "r4"])
        let apart = ((here.x - one.x) * (here.x - one.x) + (here.y - one.y) * (here.y - one.y)).squareRoot()
        #expect(apart < 0.3, "site (\(here.x), \(here.y)), one process (\(one.x), \(one.y))")
        #expect(abs(here.x - 3) < 1 && abs(here.y - 6) < 1)
        let status = try gw1.client.request("GET", "/v1/status").object
        #expect((status["site"] as? [String: Any])?["sightings_received"] as? Int ?? 0 >= 64)
        #expect(gw1.stop() == 0 && alone.stop() == 0)
    }

    /// The pallet enters the dock; the locator is killed with it inside; the next locator
    /// takes over, does not enter it again (the alert may come again if it was in flight, with
    /// the same id: SPEC §6.3), and alerts its exit.
    @Test func aLocatorKilledWithAnAssetInsideNeitherEntersItAgainNorMissesItsExit() throws {
        let broker = try PrivateBroker()
        let wms = try MQTTSubscriber(broker, topics: ["beacond/store-1/events/#"])
        let gw1 = try APIDaemon(extra: Self.site(broker, priority: 100), gatewayID: "gw1")
        let gw2 = try APIDaemon(extra: Self.site(broker, priority: 50), gatewayID: "gw2")
        try gw1.start()
        try gw2.start()
        func alerts(_ type: String) -> [[String: Any]] {
            wms.on("beacond/store-1/events/zone.\(type)").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.payload.utf8)) as? [String: Any]
            }
        }
        func eventsSent(_ d: APIDaemon) throws -> Int {
            let hooks = try d.client.request("GET", "/v1/status").object["webhooks"] as? [[String: Any]] ?? []
            return hooks.first { $0["id"] as? String == "mqtt:events" }?["delivered"] as? Int ?? 0
        }
        func walk(to at: (x: Double, y: Double), until what: String, _ done: () -> Bool) throws {
            try eventually(what, timeout: 20, every: 0.25) {
                if done() { return true }
                try Self.hear(on: broker, at: at)
                return false
            }
        }
        try walk(to: (2, 5), until: "gw1's zone.enter") { !alerts("enter").isEmpty }
        let entered = try #require(alerts("enter").first?["id"] as? String)
        #expect(
            try eventsSent(gw1) >= 1 && eventsSent(gw2) == 0,
            "\(gw2.daemon!.logs.filter { $0.contains("site.locator") || $0.contains("mqtt.") })")
        gw1.crash()
        let killed = Date()
        // The pallet stays in the dock while gw2 takes over.
        try walk(to: (2, 5), until: "gw2 as the locator") {
            let locator = (try? gw2.client.request("GET", "/v1/status").object["site"] as? [String: Any])?["locator"]
            return (locator as? [String: Any])?["this_gateway"] as? Bool == true
        }
        #expect(Date().timeIntervalSince(killed) < 10)
        for _ in 0..<8 {
            try Self.hear(on: broker, at: (2, 5))
            usleep(250_000)
        }
        try walk(to: (8, 5), until: "gw2's zone.exit") { !alerts("exit").isEmpty }
        #expect(try eventsSent(gw2) >= 1)
        // Entered once: whatever zone.enter came again is gw1's, under its id.
        #expect(Set(alerts("enter").compactMap { $0["id"] as? String }) == [entered])
        #expect(Set(alerts("exit").compactMap { $0["id"] as? String }).count == 1)
        #expect(gw2.stop() == 0)
    }
}
