import Testing

@testable import BeaconCore

/// SPEC §6.2: the site's retained topics, made from the engine's state, and only what changed
/// (or what the broker may have lost) sent.
@Suite struct RetainedStateTests {
    static let prefix = "beacond/store-1/"

    static func asset(_ id: String, zones: [String]? = [], lost: Bool = false, heard: Double = 10)
        -> RetainedState.Asset
    {
        RetainedState.Asset(
            id: id, name: nil,
            fix: zones.map {
                AssetFix(
                    asset: id, position: Point(x: 1.234, y: 5), level: 0, accuracy: 1.5, zones: $0, receivers: ["r1"])
            }, lastHeard: Fixture.at(heard), lost: lost)
    }

    @Test func anAssetIsInItsFirstZoneAtHomeInNoneAndNotHomeUnplacedOrLost() {
        #expect(Self.asset("a", zones: ["dock", "aisle"]).state == "dock")
        #expect(Self.asset("a", zones: []).state == "home")
        #expect(Self.asset("a", zones: nil).state == "not_home")
        #expect(Self.asset("a", zones: ["dock"], lost: true).state == "not_home")
    }

    @Test func stateAttributesAndRegionsHaveTheirTopicsAndQoS() throws {
        let uuid = try #require(BeaconUUID("f7826da6-4fa2-4e98-8024-bc5b71e0893e"))
        let regions = [
            RegionStatus(client: "crm", spec: RegionSpec(id: "front", uuid: uuid), state: .inside, enteredAt: nil),
            RegionStatus(client: "crm", spec: RegionSpec(id: "back", uuid: uuid), state: .outside, enteredAt: nil),
            RegionStatus(client: "crm", spec: RegionSpec(id: "new", uuid: uuid), state: .unknown, enteredAt: nil),
        ]
        let messages = RetainedState.messages(
            topics: SiteTopics(prefix: Self.prefix), assets: [Self.asset("cart", zones: ["dock"])], regions: regions)
        let byTopic = Dictionary(uniqueKeysWithValues: messages.map { ($0.topic, $0) })
        #expect(byTopic[Self.prefix + "assets/cart/state"]?.payload == "dock")
        #expect(byTopic[Self.prefix + "assets/cart/state"]?.qos == 1)
        let attributes = try #require(byTopic[Self.prefix + "assets/cart/attributes"])
        #expect(attributes.qos == 0)
        let parsed = try JSONParser.parse(attributes.payload)
        #expect(parsed["x"]?.numberValue == 1.23 && parsed["accuracy_m"]?.numberValue == 1.5)
        #expect(parsed["last_seen"]?.stringValue == RFC3339.format(Fixture.at(10)))
        #expect(!attributes.significant.contains("last_seen"))
        #expect(byTopic[Self.prefix + "regions/crm/front/state"]?.payload == "inside")
        #expect(byTopic[Self.prefix + "regions/crm/back/state"]?.payload == "outside")
        // Unknown is not a state the site can vouch for.
        #expect(byTopic[Self.prefix + "regions/crm/new/state"] == nil)
    }

    /// SPEC §10: Home Assistant's tracker shows the zones an asset flaps in among its
    /// attributes, and a flap beginning or ending is a change worth sending at once.
    @Test func theZonesAnAssetFlapsInAreAmongItsAttributes() throws {
        var flapping = Self.asset("cart", zones: ["dock"])
        flapping.fix?.flapping = ["dock"]
        let topics = SiteTopics(prefix: Self.prefix)
        let attributes = { (asset: RetainedState.Asset) in
            RetainedState.messages(topics: topics, assets: [asset], regions: []).first {
                $0.topic == Self.prefix + "assets/cart/attributes"
            }
        }
        let shown = try #require(attributes(flapping))
        let parsed = try JSONParser.parse(shown.payload)
        #expect(parsed["flapping"] == .array([.string("dock")]), "\(shown.payload)")
        let still = try #require(attributes(Self.asset("cart", zones: ["dock"])))
        #expect(try JSONParser.parse(still.payload)["flapping"] == .array([]))
        #expect(shown.significant != still.significant)
    }

    @Test func onlyChangesAreSentAndLastSeenAloneOnceAMinute() {
        var topics = RetainedTopics()
        let first = RetainedState.messages(
            topics: SiteTopics(prefix: Self.prefix), assets: [Self.asset("cart", heard: 10)], regions: [])
        #expect(topics.plan(first, at: Fixture.at(10)).count == 2)
        #expect(topics.plan(first, at: Fixture.at(11)).isEmpty)
        // Only last_seen moved: not yet...
        let heard = RetainedState.messages(
            topics: SiteTopics(prefix: Self.prefix), assets: [Self.asset("cart", heard: 12)], regions: [])
        #expect(topics.plan(heard, at: Fixture.at(12)).isEmpty)
        // ... but a minute on, so a subscriber sees it is alive.
        #expect(topics.plan(heard, at: Fixture.at(71)).map(\.topic) == [Self.prefix + "assets/cart/attributes"])
        // A zone change goes at once.
        let moved = RetainedState.messages(
            topics: SiteTopics(prefix: Self.prefix), assets: [Self.asset("cart", zones: ["dock"], heard: 72)],
            regions: [])
        #expect(Set(topics.plan(moved, at: Fixture.at(72)).map(\.topic)).count == 2)
        // A reconnect or a new locator: everything again.
        topics.resend()
        #expect(topics.plan(moved, at: Fixture.at(73)).count == 2)
    }

    /// Issue 38 #19: forged retained asset states stayed. A payload another client puts on a
    /// topic the locator sent is sent again at the next look; its own echo is not.
    @Test func aForgedPayloadOnALocatorsTopicIsSentAgain() throws {
        var topics = RetainedTopics()
        let state = RetainedState.messages(
            topics: SiteTopics(prefix: Self.prefix), assets: [Self.asset("cart", zones: ["dock"])], regions: [])
        let sent = topics.plan(state, at: Fixture.at(10))
        let stateTopic = Self.prefix + "assets/cart/state"
        let mine = try #require(sent.first { $0.topic == stateTopic })
        let echo = topics.contradicted(stateTopic, mine.payload)
        #expect(!echo)
        #expect(topics.plan(state, at: Fixture.at(11)).isEmpty)
        let forged = topics.contradicted(stateTopic, "stockroom")
        #expect(forged)
        #expect(topics.plan(state, at: Fixture.at(12)).map(\.topic) == [stateTopic])
        // A topic it never sent is not its to put right.
        let other = topics.contradicted(Self.prefix + "assets/other/state", "x")
        #expect(!other)
    }

    @Test func topicsOfEntitiesNoLongerConfiguredAreClearedWhoeverSentThem() {
        var topics = RetainedTopics()
        let both = RetainedState.messages(
            topics: SiteTopics(prefix: Self.prefix), assets: [Self.asset("cart"), Self.asset("pallet")], regions: [])
        _ = topics.plan(both, at: Fixture.at(1))
        // Found on the broker from an earlier run: an asset since removed, and an attributes
        // topic of an asset still configured but not placed since the restart.
        topics.found(Self.prefix + "assets/old/state")
        topics.found(Self.prefix + "assets/unplaced/attributes")
        let now = RetainedState.messages(
            topics: SiteTopics(prefix: Self.prefix), assets: [Self.asset("cart"), Self.asset("unplaced", zones: nil)],
            regions: [])
        let plan = topics.plan(now, at: Fixture.at(2))
        let cleared = Set(plan.filter { $0.payload.isEmpty }.map(\.topic))
        #expect(
            cleared == [
                Self.prefix + "assets/pallet/state", Self.prefix + "assets/pallet/attributes",
                Self.prefix + "assets/old/state",
            ])
        #expect(plan.filter { !$0.payload.isEmpty }.map(\.topic) == [Self.prefix + "assets/unplaced/state"])
        // Cleared once.
        #expect(topics.plan(now, at: Fixture.at(3)).isEmpty)
    }

    static func array(_ value: JSONValue?) -> [JSONValue] {
        if case let .array(items) = value { return items }
        return []
    }

    @Test func homeAssistantDiscoveryCarriesWhatHomeAssistantRequires() throws {
        let discovery = HomeAssistantDiscovery(
            prefix: "homeassistant", site: "store.1", gateways: ["gw1", "gw2"], version: "1.2.3")
        var asset = Self.asset("cart.17")
        asset.name = "Cart 17"
        let message = discovery.deviceTracker(for: asset)
        #expect(message.topic == "homeassistant/device_tracker/beacond_store_1_cart_17/config")
        #expect(message.qos == 1)
        let config = try JSONParser.parse(message.payload)
        #expect(config["unique_id"]?.stringValue == "beacond_store_1_cart_17")
        #expect(config["state_topic"]?.stringValue == "beacond/store.1/assets/cart.17/state")
        #expect(config["json_attributes_topic"]?.stringValue == "beacond/store.1/assets/cart.17/attributes")
        #expect(config["availability_mode"]?.stringValue == "any")
        #expect(Self.array(config["availability"]).count == 2)
        #expect(Self.array(config["device"]?["identifiers"]).first?.stringValue == "beacond_store_1_cart_17")
        #expect(config["device"]?["name"]?.stringValue == "Cart 17")
        #expect(config["source_type"]?.stringValue == "bluetooth_le")
        #expect(discovery.madeHere(message.payload))
        #expect(!discovery.madeHere(#"{"state_topic":"beacond/store.2/assets/cart/state"}"#))
        #expect(!discovery.madeHere("not json"))
        // Discovery rides along with each asset's state.
        let all = RetainedState.messages(
            topics: SiteTopics(prefix: "beacond/store.1/"), assets: [asset], regions: [], discovery: discovery)
        #expect(all.contains { $0.topic == message.topic })
    }

    /// SPEC §7.5: an asset whose tag reports its battery gets `assets/<asset>/battery` and, with
    /// discovery, a battery `sensor` on the same device as its tracker; one without telemetry
    /// gets neither. The percentage is the frame's, else the coin-cell estimate.
    @Test func aTagsBatteryIsASensorOnTheAssetsDevice() throws {
        let discovery = HomeAssistantDiscovery(
            prefix: "homeassistant", site: "store.1", gateways: ["gw1"], version: "1.2.3")
        var asset = Self.asset("cart.17")
        var telemetry = TagTelemetry()
        (telemetry.batteryMillivolts, telemetry.batteryAt) = (2950, .seconds(1_763_805_600))
        asset.telemetry = telemetry
        let topics = SiteTopics(prefix: "beacond/store.1/")
        let all = RetainedState.messages(topics: topics, assets: [asset], regions: [], discovery: discovery)
        let state = try #require(all.first { $0.topic == "beacond/store.1/assets/cart.17/battery" })
        let battery = try JSONParser.parse(state.payload)
        #expect(battery["percent"]?.numberValue == 92 && battery["millivolts"]?.numberValue == 2950)
        let sensor = try #require(
            all.first { $0.topic == "homeassistant/sensor/beacond_store_1_cart_17_battery/config" })
        let config = try JSONParser.parse(sensor.payload)
        #expect(config["device_class"]?.stringValue == "battery" && config["unit_of_measurement"]?.stringValue == "%")
        #expect(config["state_topic"]?.stringValue == state.topic)
        #expect(config["value_template"]?.stringValue == "{{ value_json.percent }}")
        #expect(config["unique_id"]?.stringValue == "beacond_store_1_cart_17_battery")
        let tracker = try JSONParser.parse(discovery.deviceTracker(for: asset).payload)
        #expect(
            Self.array(config["device"]?["identifiers"]).first?.stringValue
                == Self.array(tracker["device"]?["identifiers"]).first?.stringValue)
        #expect(discovery.madeHere(sensor.payload))
        // Without a reading: no battery, no sensor.
        let silent = RetainedState.messages(
            topics: topics, assets: [Self.asset("cart.17")], regions: [], discovery: discovery)
        #expect(!silent.contains { $0.topic.hasSuffix("/battery") || $0.topic.contains("/sensor/") })
        // The estimate: full at 3.0 V, 20 % at 2.5 V, empty at 2.0 V; the frame's own first.
        for (mv, percent) in [(3100, 100), (3000, 100), (2750, 60), (2500, 20), (2250, 10), (2000, 0), (1800, 0)] {
            var t = TagTelemetry()
            t.batteryMillivolts = mv
            #expect(t.batteryPercentShown == percent, "\(mv) mV")
        }
        telemetry.batteryPercent = 55
        #expect(telemetry.batteryPercentShown == 55)
    }
}
