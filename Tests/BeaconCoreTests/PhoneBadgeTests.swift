import Testing

@testable import BeaconCore

/// A phone as a badge (SPEC §9): it changes its address every 15 minutes, and the engine
/// follows it by its identity resolving key as one asset, with one `zone.enter` for a stay.
@Suite struct PhoneBadgeTests {
    typealias T = AssetTrackerTests
    static let key = IdentityResolvingKey(hex: "ec0234a357c8ad05341010a60a397d9b")!
    static let stranger = IdentityResolvingKey(hex: "00112233445566778899aabbccddeeff")!

    static func engine() -> BeaconEngine {
        var site = T.site(alarms: [AlarmDefinition(id: "left-watch", zones: ["left"], on: [.enter, .exit])])
        site.assets = [AssetDefinition(id: "phone", tag: .irk(key))]
        return BeaconEngine(
            configuration: EngineConfiguration(receivers: T.calibrations, site: site), start: T.t0)
    }

    /// The phone stands at (2, 5), inside `left`, for 50 minutes, 2 packets a second to each
    /// receiver, sending from `sender`'s addresses, a new one every 15 minutes; its zone alerts.
    static func stay(sender: IdentityResolvingKey) -> (alerts: [ZoneAlert], addresses: Set<String>) {
        var engine = engine()
        var alerts: [ZoneAlert] = []
        var addresses: Set<String> = []
        for halfSecond in 0..<(50 * 60 * 2) {
            let t = T.t0 + .milliseconds(500 * Int64(halfSecond))
            let address = sender.address(prand: UInt32(0x1000 + halfSecond / (15 * 60 * 2)))!
            addresses.insert(address)
            for r in T.corners {
                let s = Sighting(
                    time: t, receiver: r.id, address: address, addressType: "random",
                    rssi: T.rssi(at: Point(x: 2, y: 5), from: r))
                for e in engine.ingest(s) { if case let .zone(a) = e.payload { alerts.append(a) } }
            }
        }
        return (alerts, addresses)
    }

    @Test func aPhoneThatChangesItsAddressStaysOneAssetInOneVisit() {
        let (alerts, addresses) = Self.stay(sender: Self.key)
        #expect(addresses.count == 4, "the phone sent from four addresses")
        #expect(alerts.map(\.condition) == [.enter], "\(alerts.map { "\($0.condition) \($0.asset)" })")
        #expect(alerts.first?.asset == "phone")
    }

    /// The same stay from a phone whose key is not configured: no asset, no alert.
    @Test func anotherPhonesAddressesAreNobody() {
        let (alerts, _) = Self.stay(sender: Self.stranger)
        #expect(alerts.isEmpty)
    }
}
