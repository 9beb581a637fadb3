import Foundation
import TestSupport
import Testing

/// SPEC §9 on the real mosquitto: an ESPresense node and an OpenMQTTGateway, their messages
/// published with `mosquitto_pub` exactly as their firmware publishes them, place a tag together
/// with beacond's own receivers; a room or gateway not mapped is counted and named once.
@Suite(.serialized) struct ForeignReceiverTests {
    /// AssetAPITests' floor: r1 and r2 are this gateway's own (their records posted to the
    /// API), r3 is an ESPresense node in the "kitchen", r4 an OpenMQTTGateway named OMG_lobby.
    static func site(_ broker: PrivateBroker) -> String {
        """
        site:
          id: store-1
          mqtt: {url: "\(broker.url)", keepalive: 5s}
          espresense: {rooms: {kitchen: r3}}
          openmqttgateway: {prefix: home, gateways: {OMG_lobby: r4}}

        """ + AssetAPITests.site
    }

    /// The pallet at `at` heard once by each receiver: r1 and r2 posted, r3 as ESPresense's
    /// `espresense/devices/<id>/<room>`, r4 as OpenMQTTGateway's `home/<name>/BTtoMQTT/<MAC>`.
    static func hear(_ d: APIDaemon, on broker: PrivateBroker, at: (x: Double, y: Double)) throws {
        let lines = AssetAPITests.sightings(at: at)
        try d.post(Array(lines[0..<2]))
        func rssi(_ line: String) -> Int {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["rssi"] as? Int ?? 0
        }
        try broker.publish(
            "espresense/devices/known:d00000000009/kitchen",
            #"{"id":"known:d00000000009","idType":55,"rssi@1m":-59,"rssi":\#(rssi(lines[2])),"raw":7.08,"distance":7.1,"speed":0.01,"mac":"d00000000009","interval":205}"#
        )
        try broker.publish(
            "home/OMG_lobby/BTtoMQTT/D00000000009",
            #"{"id":"D0:00:00:00:00:09","mac_type":1,"adv_type":3,"rssi":\#(rssi(lines[3])),"txpower":-59}"#)
    }

    @Test func anESPresenseNodeAndAnOpenMQTTGatewayPlaceATagWithTheGatewaysOwnReceivers() throws {
        let broker = try PrivateBroker()
        let d = try APIDaemon(extra: Self.site(broker), gatewayID: "gw1")
        try d.start()
        try d.waitForStatus("the broker connection") {
            (($0["site"] as? [String: Any])?["broker"] as? [String: Any])?["connected"] as? Bool == true
        }
        var position: (x: Double, y: Double, used: Set<String>)?
        try eventually(
            "the pallet placed by all four receivers", timeout: 20, every: 0.25,
            detail: { "\(String(describing: position))" }
        ) {
            try Self.hear(d, on: broker, at: (2, 5))
            position = try SiteRemoteReceiverTests.position(d)
            return position?.used == ["r1", "r2", "r3", "r4"]
        }
        let p = try #require(position)
        #expect(abs(p.x - 2) < 1.5 && abs(p.y - 5) < 1.5, "placed at (\(p.x), \(p.y)), truly at (2, 5)")
        _ = try d.waitForHistory("the dock entered", timeout: 10) {
            $0.contains { $0["type"] as? String == "beacond.zone.enter" }
        }

        // Shown per receiver: the site's status and the metrics.
        let site = try #require(try d.client.request("GET", "/v1/status").object["site"] as? [String: Any])
        let foreign = site["foreign_receivers"] as? [[String: Any]] ?? []
        #expect(foreign.map { $0["receiver"] as? String } == ["r3", "r4"])
        #expect(foreign.map { $0["system"] as? String } == ["espresense", "openmqttgateway"])
        #expect(foreign.allSatisfy { ($0["sightings"] as? Int ?? 0) > 0 && $0["last_heard"] is String })
        // The floor view draws them as any receiver: heard, so not greyed.
        let floor = try d.client.request("GET", "/v1/floor").object["receivers"] as? [[String: Any]] ?? []
        for id in ["r3", "r4"] {
            let r = floor.first { $0["id"] as? String == id }
            #expect(
                r?["silent"] as? Bool == false && (r?["sightings"] as? Int ?? 0) > 0, "\(id): \(String(describing: r))")
        }
        let metrics = try d.client.request("GET", "/metrics").body
        #expect(
            metrics.contains(#"beacond_site_foreign_sightings_total{name="kitchen",receiver="r3",system="espresense"}"#)
        )
        #expect(metrics.contains(#"beacond_receiver_sightings_total{receiver="r4"}"#))

        // A room and a gateway not mapped: counted, each named once in the log.
        for _ in 0..<3 {
            try broker.publish(
                "espresense/devices/known:d00000000009/garage",
                #"{"id":"known:d00000000009","rssi":-70,"mac":"d00000000009"}"#)
            try broker.publish("home/OMG_attic/BTtoMQTT/D00000000009", #"{"id":"D0:00:00:00:00:09","rssi":-70}"#)
        }
        try d.waitForStatus("the unmapped messages counted") { status in
            let dropped = (status["site"] as? [String: Any])?["dropped"] as? [String: Any] ?? [:]
            return dropped["espresense.unmapped_room"] as? Int == 3
                && dropped["openmqttgateway.unmapped_gateway"] as? Int == 3
        }
        let told = d.daemon!.logs.filter { $0.contains("site.unmapped_receiver") }
        #expect(told.count == 2, "\(told)")
        #expect(told.contains { $0.contains("name=garage") } && told.contains { $0.contains("name=OMG_attic") })
        #expect(d.stop() == 0)
    }
}
