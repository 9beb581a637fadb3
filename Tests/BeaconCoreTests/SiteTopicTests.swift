import BeaconCore
import Testing

/// A site's topics are formatted and parsed by `SiteTopic` alone: what a gateway publishes
/// parses back to what it meant, and what it must not take for a site topic does not parse.
struct SiteTopicTests {
    static let topics = SiteTopics(site: "store-042")
    static let every: [SiteTopic] = [
        .sightings(gateway: "gw1"), .status(gateway: "gw1"), .info(gateway: "gw-2"), .decided(gateway: "gw1"),
        .delivered(gateway: "gw1", webhook: "crm"), .locator, .calibration, .events(kind: "zone.enter"),
        .asset(id: "cart-17", field: "state"), .asset(id: "cart-17", field: "attributes"),
        .regionState(client: "app", region: "till"), .zone(id: "aisle-3", field: "occupancy"),
    ]

    @Test(arguments: every) func everyTopicParsesBackToItself(topic: SiteTopic) {
        let text = Self.topics[topic]
        #expect(text.hasPrefix("beacond/store-042/"))
        #expect(Self.topics.parse(text) == topic, "\(text)")
    }

    @Test func theTopicsAreTheDocumentedOnes() {
        #expect(Self.topics.status("gw1") == "beacond/store-042/gateways/gw1/status")
        #expect(Self.topics.delivered("gw1", webhook: "crm") == "beacond/store-042/gateways/gw1/delivered/crm")
        #expect(Self.topics[.regionState(client: "app", region: "till")] == "beacond/store-042/regions/app/till/state")
        #expect(Self.topics[.events(kind: "zone.enter")] == "beacond/store-042/events/zone.enter")
        #expect(Self.topics.filter(.delivered) == "beacond/store-042/gateways/+/delivered/+")
        #expect(Self.topics[.zone(id: "aisle-3", field: "occupancy")] == "beacond/store-042/zones/aisle-3/occupancy")
        #expect(Self.topics.filter(.zones) == "beacond/store-042/zones/+/+")
        #expect(SiteTopic.Filter.allCases.count == 9)
    }

    @Test func whatIsNotASiteTopicDoesNotParse() {
        for text in [
            "beacond/other-site/gateways/gw1/status",  // another site's
            "homeassistant/status",  // Home Assistant's
            "beacond/store-042/gateways/gw1/forged",  // no such level
            "beacond/store-042/gateways/gw1",  // too short
            "beacond/store-042/gateways//status",  // an empty level
            "beacond/store-042/sightings/gw1/extra",  // too long
            "beacond/store-042/regions/app/till/other",  // not a state
            "beacond/store-042/",  // the prefix alone
        ] {
            #expect(Self.topics.parse(text) == nil, "\(text)")
        }
        #expect(!Self.topics.contains("homeassistant/status"))
        #expect(Self.topics.contains("beacond/store-042/gateways/gw1/forged"))
    }

    /// Each topic a gateway takes is matched by exactly one of its filters (`+` is one level);
    /// the events and the calibration, which it only publishes, by none.
    @Test func eachTopicIsMatchedByOneFilter() {
        func matches(_ filter: String, _ topic: String) -> Bool {
            let f = filter.split(separator: "/"), t = topic.split(separator: "/")
            return f.count == t.count && zip(f, t).allSatisfy { $0 == "+" || $0 == $1 }
        }
        for topic in Self.every {
            let matching = SiteTopic.Filter.allCases.filter { matches(Self.topics.filter($0), Self.topics[topic]) }
            switch topic {
            case .events, .calibration: #expect(matching.isEmpty, "\(topic)")
            default: #expect(matching.count == 1, "\(topic): \(matching)")
            }
        }
    }
}
