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
    /// `asNodes`: published as the nodes' own users of the locked-down broker.
    static func hear(_ d: APIDaemon, on broker: PrivateBroker, at: (x: Double, y: Double), asNodes: Bool = false)
        throws
    {
        let lines = AssetAPITests.sightings(at: at)
        try d.post(Array(lines[0..<2]))
        func rssi(_ line: String) -> Int {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["rssi"] as? Int ?? 0
        }
        try broker.publish(
            "espresense/devices/known:d00000000009/kitchen",
            #"{"id":"known:d00000000009","idType":55,"rssi@1m":-59,"rssi":\#(rssi(lines[2])),"raw":7.08,"distance":7.1,"speed":0.01,"mac":"d00000000009","interval":205}"#,
            as: asNodes ? "espresense" : nil
        )
        try broker.publish(
            "home/OMG_lobby/BTtoMQTT/D00000000009",
            #"{"id":"D0:00:00:00:00:09","mac_type":1,"adv_type":3,"rssi":\#(rssi(lines[3])),"txpower":-59}"#,
            as: asNodes ? "openmqttgateway" : nil)
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

    /// Issue 51, item 4: on the shipped lock-down the gateways could not read the nodes' topics,
    /// and nothing said so (mosquitto grants the subscription and delivers nothing). Now its ACL
    /// lets them (and gives the nodes users of their own); and a topic that carries nothing —
    /// here a prefix the ACL does not name — is logged, shown in the status and `beaconctl
    /// status`, and counted.
    @Test func onTheShippedLockDownTheNodesArriveAndASilentTopicIsSaid() throws {
        var users = SiteTests.passwords
        (users["espresense"], users["openmqttgateway"]) = ("pw-esp", "pw-omg")
        let broker = try PrivateBroker(users: users, lockedDown: true)
        let d = try SiteTests.gatewayDaemon("gw1", on: broker, Self.site(broker))
        try d.start()
        // Another prefix, which the shipped ACL does not let a gateway read.
        let other = try SiteTests.gatewayDaemon(
            "gw2", on: broker,
            Self.site(broker).replacingOccurrences(
                of: "espresense: {rooms: {kitchen: r3}}", with: "espresense: {prefix: esp, rooms: {kitchen: r3}}"))
        try other.start()
        var position: (x: Double, y: Double, used: Set<String>)?
        try eventually(
            "the pallet placed by all four receivers", timeout: 20, every: 0.25,
            detail: { "\(String(describing: position)); \(d.daemon!.logs.suffix(10))" }
        ) {
            try Self.hear(d, on: broker, at: (2, 5), asNodes: true)
            try broker.publish(
                "esp/devices/known:d00000000009/kitchen",
                #"{"id":"known:d00000000009","rssi":-70,"mac":"d00000000009"}"#,
                as: "espresense")
            position = try SiteRemoteReceiverTests.position(d)
            return position?.used == ["r1", "r2", "r3", "r4"]
        }
        let status = try other.waitForStatus("the silent topic shown", timeout: 45) {
            (SiteTests.site($0)["broker"] as? [String: Any])?["silent_topics"] as? [String] == ["esp/devices/+/+"]
        }
        #expect(SiteTests.site(status)["foreign_receivers"] != nil)
        try other.daemon!.waitUntil("site.foreign_silent logged", timeout: 5) { _, logs in
            logs.contains { $0.contains("site.foreign_silent") && $0.contains("topic=esp/devices/+/+") }
        }
        #expect(try other.client.request("GET", "/metrics").body.contains("beacond_site_silent_topics 1\n"))
        let shown = try runCommand(Executables.built("beaconctl"), ["--socket", other.socketPath, "status"])
        #expect(shown.stdout.contains("SILENT    nothing on esp/devices/+/+ since connecting"), "\(shown.stdout)")
        // The gateway on the shipped prefixes hears both systems: nothing silent, nothing refused.
        let first = SiteTests.site(try d.client.request("GET", "/v1/status").object)["broker"] as? [String: Any]
        #expect(first?["silent_topics"] as? [String] == [], "\(String(describing: first))")
        #expect((first?["publish_refused"] as? [String: Any])?.isEmpty == true, "\(String(describing: first))")
        #expect(!d.daemon!.logs.contains { $0.contains("refused") || $0.contains("site.foreign_silent") })
        #expect(other.stop() == 0)
        #expect(d.stop() == 0)
    }
}
