import Foundation
import TestSupport
import Testing

/// SPEC §6.2–6.3: what the site's locator publishes on the broker — each event on
/// `events/<type>` from the durable outbox, and the site's state on retained topics with Home
/// Assistant discovery — checked by a real subscriber on a real mosquitto.
@Suite(.serialized) struct SiteOutputTests {
    /// One gateway (so it is the locator), four receivers, a dock zone watched by an alarm.
    static func site(_ broker: PrivateBroker, homeAssistant: Bool = false) -> String {
        "site:\n  id: store-1\n  mqtt: {url: \"\(broker.url)\", keepalive: 5s}\n"
            + (homeAssistant ? "  home_assistant: {discovery_prefix: homeassistant}\n" : "")
            + AssetAPITests.site.replacingOccurrences(
                of: "{id: pallet-9, ", with: "{id: pallet-9, name: \"Pallet 9\", ")
    }

    static let events = "beacond/store-1/events/"

    /// Posts the pallet's sightings at `at` until `condition` holds for the gateway's history.
    static func walk(
        _ d: APIDaemon, to at: (x: Double, y: Double), until what: String, _ condition: ([[String: Any]]) -> Bool
    ) throws {
        try eventually(
            what, timeout: 20, every: 0.2,
            detail: {
                // Where the engine has the pallet, and the last alerts: what a stalled walk saw.
                let assets = (try? d.client.request("GET", "/v1/assets").body) ?? "?"
                let alerts = ((try? d.history()) ?? []).suffix(6).map { "\($0["type"] ?? "") \($0["time"] ?? "")" }
                return "assets \(assets.prefix(600)); last events \(alerts)"
            }
        ) {
            try d.post(AssetAPITests.sightings(at: at))
            return condition(try d.history())
        }
    }

    static func zoneEvents(_ history: [[String: Any]]) -> [String] {
        history.filter { ($0["type"] as? String ?? "").hasPrefix("beacond.zone.") }.compactMap { $0["id"] as? String }
    }

    static func ids(_ messages: [MQTTSubscriber.Message], prefix: String) -> [String] {
        messages.filter { $0.topic.hasPrefix(prefix) }.compactMap { m in
            (try? JSONSerialization.jsonObject(with: Data(m.payload.utf8)) as? [String: Any])?["id"] as? String
        }
    }

    /// Zone alerts reach a subscriber as CloudEvents on `events/zone.enter|exit`. With the
    /// broker stopped for 20 s while the pallet leaves and comes back twice, the alerts wait in
    /// the outbox and all arrive, in order, once the broker is back: none lost. (20 s, not a
    /// minute: a minute's outage only made the test wait longer, not find more.)
    @Test func eventsLeaveFromTheOutboxAndABrokerOutageLosesNone() throws {
        let broker = try PrivateBroker(persistent: true)
        let wms = try MQTTSubscriber(broker, topics: [Self.events + "#"], session: "wms")
        try wms.waitUntil("the subscription", timeout: 5) { _ in true }
        usleep(300_000)
        let gw1 = try APIDaemon(extra: Self.site(broker), gatewayID: "gw1")
        try gw1.start()
        try Self.walk(gw1, to: (2, 5), until: "zone.enter") { !Self.zoneEvents($0).isEmpty }
        let first = Self.zoneEvents(try gw1.history())
        try wms.waitUntil("zone.enter on the broker") { Self.ids($0, prefix: Self.events + "zone.") == first }
        let enter = try #require(wms.on(Self.events + "zone.enter").first)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(enter.payload.utf8)) as? [String: Any])
        #expect(body["type"] as? String == "beacond.zone.enter" && body["subject"] as? String == "pallet-9")
        #expect((body["data"] as? [String: Any])?["zone"] as? String == "dock")
        #expect((body["data"] as? [String: Any])?["crossed_at"] is String, "the crossing's time, SPEC §10")
        #expect(!wms.on(Self.events + "asset.position").isEmpty)

        // The broker goes away for 20 s; the pallet leaves the dock and comes back meanwhile,
        // more than once.
        broker.stop()
        let stopped = Date()
        while Date().timeIntervalSince(stopped) < 20 {
            // From where the engine has the pallet now: unheard for a second (the waits above,
            // on a loaded machine) it is lost, and has left the dock already.
            let count = Self.zoneEvents(try gw1.history()).count
            let goingIn = !(try Self.inDock(gw1))
            try Self.walk(gw1, to: goingIn ? (2, 5) : (8, 5), until: "a crossing") { Self.zoneEvents($0).count > count }
            // Stay a while, heard, before the next crossing.
            for _ in 0..<12 where Date().timeIntervalSince(stopped) < 20 {
                try gw1.post(AssetAPITests.sightings(at: goingIn ? (2, 5) : (8, 5)))
                usleep(250_000)
            }
        }
        let waiting = try gw1.waitForStatus("the alerts waiting in the outbox") { status in
            let hooks = status["webhooks"] as? [[String: Any]] ?? []
            return (hooks.first { $0["id"] as? String == "mqtt:events" }?["pending"] as? Int ?? 0) >= 2
        }
        #expect((Self.site(waiting)["broker"] as? [String: Any])?["connected"] as? Bool == false)
        try broker.start()
        let all = Self.zoneEvents(try gw1.history())
        // At least once, in order: a batch the broker took but did not acknowledge before a
        // drop is sent again with the same ids, so a consumer keeps each id's first arrival.
        try eventually(
            "every zone alert, in order", timeout: 90, every: 0.2,
            detail: { "made \(all), received \(Self.ids(wms.messages, prefix: Self.events + "zone."))" }
        ) { Self.firstArrivals(Self.ids(wms.messages, prefix: Self.events + "zone.")).filter(all.contains) == all }
        let received = Self.ids(wms.messages, prefix: Self.events + "zone.")
        // Every alert made through the outage arrived; nothing arrived that the gateway did not
        // make (the pallet, no longer heard, may have left the dock since).
        #expect(Set(all).isSubset(of: Set(received)), "received \(received), made \(all)")
        #expect(Set(received).isSubset(of: Set(Self.zoneEvents(try gw1.history()))))
        #expect(wms.on(Self.events + "zone.exit").count >= 2, "\(received.count) alerts")
        #expect(gw1.stop() == 0)
    }

    static func site(_ status: [String: Any]) -> [String: Any] { status["site"] as? [String: Any] ?? [:] }

    /// Whether the engine has the pallet in the dock.
    static func inDock(_ d: APIDaemon) throws -> Bool {
        let assets = try d.client.request("GET", "/v1/assets").object["assets"] as? [[String: Any]] ?? []
        return (assets.first { $0["id"] as? String == "pallet-9" }?["zones"] as? [String])?.contains("dock") == true
    }

    /// SPEC §7.4 through every output: the pallet's TLM frame says 2,410 mV, and the one
    /// `asset.battery_low` it makes reaches the API's stream (filtered to it) and the broker's
    /// `events/asset.battery_low`, with the same id as in the history.
    @Test func aTagsAlertReachesTheStreamAndTheBroker() throws {
        let broker = try PrivateBroker()
        let wms = try MQTTSubscriber(broker, topics: [Self.events + "asset.battery_low"])
        let gw1 = try APIDaemon(extra: Self.site(broker), gatewayID: "gw1")
        try gw1.start()
        let stream = try gw1.client.stream(query: "?type=asset.battery_low")
        defer { stream.close() }
        for _ in 0..<3 { try gw1.post(AssetAPITests.sightings() + [HomeAssistantTests.tlm(millivolts: 2410)]) }
        let told = try gw1.waitForHistory("asset.battery_low") {
            $0.contains { $0["type"] as? String == "beacond.asset.battery_low" }
        }
        let id = try #require(told.first { $0["type"] as? String == "beacond.asset.battery_low" }?["id"] as? String)
        let streamed = try #require(try stream.next(timeout: 15))
        #expect(streamed.event == "beacond.asset.battery_low" && streamed.id == id, "\(streamed)")
        #expect(streamed.data.contains("\"millivolts\":2410"))
        let published = try wms.waitUntil("events/asset.battery_low") { !$0.isEmpty }
        #expect(Self.firstArrivals(Self.ids(published, prefix: Self.events + "asset.battery_low")) == [id])
        #expect(gw1.stop() == 0)
    }

    /// SPEC §10: a visit reaches the broker on `events/zone.visit`, under its history id.
    @Test func aVisitReachesTheBrokerOnItsTopic() throws {
        let broker = try PrivateBroker()
        let wms = try MQTTSubscriber(broker, topics: [Self.events + "zone.visit"])
        let gw1 = try APIDaemon(
            extra: Self.site(broker) + "analytics: {visit_lag: 10s, rejoin: 1s, min_visit: 1s}\n", gatewayID: "gw1")
        try gw1.start()
        try Self.walk(gw1, to: (2, 5), until: "zone.enter") { !Self.zoneEvents($0).isEmpty }
        // Long enough in the dock to be a visit (a few seconds are not).
        let positions = try gw1.history(type: "asset.position").count
        try Self.walk(gw1, to: (2, 5), until: "ten positions in the dock") {
            $0.filter { $0["type"] as? String == "beacond.asset.position" }.count >= positions + 10
        }
        let told = try Self.walkUntilVisit(gw1)
        let published = try wms.waitUntil("events/zone.visit") { !$0.isEmpty }
        #expect(Self.firstArrivals(Self.ids(published, prefix: Self.events + "zone.visit")) == [told])
        #expect(gw1.stop() == 0)
    }

    /// Walks the pallet out of the dock until its visit is told; the visit's id.
    static func walkUntilVisit(_ d: APIDaemon) throws -> String {
        let isVisit = { (e: [String: Any]) in e["type"] as? String == "beacond.zone.visit" }
        var history: [[String: Any]] = []
        try eventually("zone.visit", timeout: 30, every: 0.2) {
            try d.post(AssetAPITests.sightings(at: (8, 5)))
            history = try d.history()
            return history.contains(where: isVisit)
        }
        return try #require(history.first(where: isVisit)?["id"] as? String)
    }

    /// Each id once, where it first arrived.
    static func firstArrivals(_ ids: [String]) -> [String] {
        var seen = Set<String>()
        return ids.filter { seen.insert($0).inserted }
    }

    /// Issue 39's stop-order defect: the site link disconnected the broker before the
    /// `mqtt:events` worker's last attempt, so an alert the broker had not yet acknowledged
    /// stayed in the outbox at every SIGTERM. With the broker hung while the pallet leaves
    /// the dock, SIGTERM, and the broker back half a second later: the last attempt is
    /// acknowledged, the subscriber has the exit, and the outbox is empty.
    @Test func aStopLetsTheLastAttemptOfTheSitesEventsFinish() throws {
        let broker = try PrivateBroker()
        let wms = try MQTTSubscriber(broker, topics: [Self.events + "#"])
        // A keepalive longer than the hang: the connection stays up while the broker is stopped.
        let gw1 = try APIDaemon(
            extra: Self.site(broker).replacingOccurrences(of: "keepalive: 5s", with: "keepalive: 60s"), gatewayID: "gw1"
        )
        try gw1.start()
        try Self.walk(gw1, to: (2, 5), until: "zone.enter") { !Self.zoneEvents($0).isEmpty }
        try wms.waitUntil("zone.enter on the broker") { !$0.filter { $0.topic == Self.events + "zone.enter" }.isEmpty }
        broker.pause()
        defer { broker.resume() }
        try Self.walk(gw1, to: (8, 5), until: "zone.exit") { Self.zoneEvents($0).count >= 2 }
        let pid = gw1.daemon!.process.processIdentifier
        kill(pid, SIGTERM)
        usleep(500_000)
        broker.resume()
        gw1.daemon!.process.waitUntilExit()
        #expect(gw1.daemon!.process.terminationStatus == 0)
        try wms.waitUntil("zone.exit after the stop", timeout: 10) {
            !$0.filter { $0.topic == Self.events + "zone.exit" }.isEmpty
        }
        let left = try runCommand(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [
                "-c",
                "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT count(*) FROM outbox WHERE webhook = 'mqtt:events'\").fetchone()[0])",
                gw1.dir.appendingPathComponent("state/beacond.sqlite").path,
            ])
        #expect(left.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(left.stdout)\(left.stderr)")
    }

    /// The locator keeps the pallet's zone, its attributes and its Home Assistant
    /// device_tracker retained; clears what an earlier configuration left for an asset that
    /// is gone (and not another site's); and sends discovery again when Home Assistant says
    /// `online`.
    @Test func theSitesStateIsRetainedWithHomeAssistantDiscovery() throws {
        let broker = try PrivateBroker()
        let ha = "homeassistant/device_tracker/"
        try broker.publish("beacond/store-1/assets/gone/state", "home", retain: true)
        try broker.publish(
            ha + "beacond_store-1_gone/config", #"{"state_topic":"beacond/store-1/assets/gone/state"}"#, retain: true)
        try broker.publish(
            ha + "beacond_store-2_cart/config", #"{"state_topic":"beacond/store-2/assets/cart/state"}"#, retain: true)
        let gw1 = try APIDaemon(extra: Self.site(broker, homeAssistant: true), gatewayID: "gw1")
        try gw1.start()
        try Self.walk(gw1, to: (2, 5), until: "zone.enter") { !Self.zoneEvents($0).isEmpty }
        let state = "beacond/store-1/assets/pallet-9/state"
        try? eventually("the pallet's state retained", every: 0.1) { try broker.retained(state) == "dock" }
        #expect(try broker.retained(state) == "dock")
        let attributes = try #require(try broker.retained("beacond/store-1/assets/pallet-9/attributes"))
        let a = try #require(try JSONSerialization.jsonObject(with: Data(attributes.utf8)) as? [String: Any])
        #expect(abs((a["x"] as? Double ?? 99) - 2) < 1.5 && a["zones"] as? [String] == ["dock"])
        #expect(a["accuracy_m"] as? Double != nil && a["last_seen"] as? String != nil && a["level"] as? Int == 0)

        let topic = ha + "beacond_store-1_pallet-9/config"
        let text = try #require(try broker.retained(topic))
        let config = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(config["unique_id"] as? String == "beacond_store-1_pallet-9")
        #expect(config["state_topic"] as? String == state)
        #expect(config["json_attributes_topic"] as? String == "beacond/store-1/assets/pallet-9/attributes")
        #expect(config["payload_home"] as? String == "home" && config["payload_not_home"] as? String == "not_home")
        let availability = config["availability"] as? [[String: Any]] ?? []
        #expect(availability.compactMap { $0["topic"] as? String } == ["beacond/store-1/gateways/gw1/status"])
        #expect(config["payload_available"] as? String == "online")
        let device = config["device"] as? [String: Any] ?? [:]
        #expect(
            device["identifiers"] as? [String] == ["beacond_store-1_pallet-9"]
                && device["name"] as? String == "Pallet 9")

        // What an earlier configuration left for "gone" is cleared; another site's is not.
        #expect(try broker.retained("beacond/store-1/assets/gone/state") == nil)
        #expect(try broker.retained(ha + "beacond_store-1_gone/config") == nil)
        #expect(try broker.retained(ha + "beacond_store-2_cart/config") != nil)

        // Home Assistant restarts: it says online, and gets its configs again.
        let listener = try MQTTSubscriber(broker, topics: [topic])
        try listener.waitUntil("the retained config") { $0.count == 1 }
        try broker.publish("homeassistant/status", "online")
        try listener.waitUntil("the config sent again", timeout: 10) { m in m.contains { !$0.retained } }

        // The receivers hear each other's calibration advertisements: the locator keeps the
        // fit on the retained `calibration` topic (docs/sites.md).
        var heard: [String] = []
        for (hearer, advertiser, rssi) in [("r1", "r2", -79), ("r2", "r1", -79), ("r1", "r3", -82), ("r3", "r1", -82)] {
            heard += Array(
                repeating: APIDaemon.calibrationSighting(advertiser: advertiser, hearer: hearer, rssi: rssi), count: 5)
        }
        try gw1.post(heard)
        var calibration: [String: Any] = [:]
        try? eventually("the calibration retained", every: 0.1) {
            if let text = try broker.retained("beacond/store-1/calibration") {
                calibration = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
            }
            return !calibration.isEmpty
        }
        let fits = calibration["fits"] as? [[String: Any]] ?? []
        #expect(fits.compactMap { $0["receiver"] as? String } == ["r1", "r2", "r3"], "\(calibration)")
        #expect(calibration["uuid"] as? String == APIDaemon.calibrationUUID)
        #expect(gw1.stop() == 0)
    }

    /// A chain (docs/sites.md): the store's broker bridges the site's events and state up to a
    /// central broker, and keeps the raw sightings in the store. A subscriber at the centre
    /// gets the zone alert and the retained state, and no sighting.
    @Test func aBridgeCarriesEventsAndStateUpAndKeepsSightingsInTheStore() throws {
        let central = try PrivateBroker()
        let bridge = """
            connection central
            address 127.0.0.1:\(central.port)
            cleansession true
            topic beacond/store-1/events/# out 1
            topic beacond/store-1/assets/# out 1
            topic beacond/store-1/regions/# out 1
            topic beacond/store-1/gateways/+/status out 1
            topic beacond/store-1/locator out 1

            """
        let store = try PrivateBroker(extra: bridge)
        let headOffice = try MQTTSubscriber(central, topics: ["beacond/#"])
        let gw1 = try APIDaemon(extra: Self.site(store), gatewayID: "gw1")
        try gw1.start(arguments: ["--no-print-events"])
        // The other gateways' sightings are on the store's broker ...
        try store.publish(
            "beacond/store-1/sightings/gw2", #"{"t":1,"receiver":"r1","address":"aa:bb:cc:dd:ee:ff","rssi":-70}"#)
        try Self.walk(gw1, to: (2, 5), until: "zone.enter") { !Self.zoneEvents($0).isEmpty }
        let made = Self.zoneEvents(try gw1.history())
        try headOffice.waitUntil("the zone alert at the centre") { Self.ids($0, prefix: Self.events + "zone.") == made }
        try headOffice.waitUntil("the pallet's state at the centre") { m in
            m.contains { $0.topic == "beacond/store-1/assets/pallet-9/state" && $0.payload == "dock" }
        }
        #expect(headOffice.messages.contains { $0.topic == "beacond/store-1/gateways/gw1/status" })
        // ... and none of them reaches the centre.
        #expect(!headOffice.messages.contains { $0.topic.contains("/sightings/") })
        #expect(gw1.stop() == 0)
    }
}
