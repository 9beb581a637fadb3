import Testing

@testable import BeaconCore

/// Issue 25, item 7: a flood of made-up beacons cannot grow the engine's table past its
/// limit (180,000 spoofed beacons added 52 MiB), and the listing is built a page at a time.
@Suite struct BeaconTableLimitTests {
    @Test func aFloodOfBeaconsForgetsTheStalestAndKeepsTheTableBounded() {
        var engine = Fixture.engine([Fixture.region("store", major: 1)])
        engine.beaconLimit = 100
        // The region's beacon, then 300 made-up ones.
        _ = engine.ingest(Fixture.sighting(1, major: 1, minor: 1))
        for i in 0..<300 { _ = engine.ingest(Fixture.sighting(2 + Double(i) * 0.01, major: 2, minor: UInt16(i))) }
        #expect(engine.beaconCount <= 100)
        #expect(engine.counters.beaconsEvicted >= 200)
        // The newest are kept, the stalest (the region's own, heard first) went first.
        let (total, page) = engine.beaconStatuses(at: Fixture.at(5), within: .seconds(30), offset: 0, limit: 3)
        #expect(total == engine.beaconCount)
        #expect(
            page.map(\.identity)
                == [299, 298, 297].map { .ibeacon(IBeaconID(uuid: Fixture.storeUUID, major: 2, minor: $0)) })
        // Regions keep their own state: the forgotten beacon heard again still determines its region.
        _ = engine.ingest(Fixture.sighting(6, major: 1, minor: 1))
        _ = engine.ingest(Fixture.sighting(7, major: 1, minor: 1))
        #expect(engine.regionStatuses(client: "app").first?.state == .inside)
    }

    @Test func pagesOfTheListingFollowOnWithoutGapOrRepeat() {
        var engine = Fixture.engine([])
        for i in 0..<25 { _ = engine.ingest(Fixture.sighting(1 + Double(i) * 0.1, major: 3, minor: UInt16(i))) }
        var seen: [BeaconIdentity] = []
        var offset = 0
        while true {
            let (total, page) = engine.beaconStatuses(
                at: Fixture.at(4), within: .seconds(30), offset: offset, limit: 10)
            #expect(total == 25)
            seen += page.map(\.identity)
            offset += page.count
            if page.count < 10 { break }
        }
        #expect(seen.count == 25 && Set(seen.map { "\($0)" }).count == 25)
    }

    /// A relay inventing a receiver name per record cannot grow the receiver table: past the
    /// limit, sightings from new names are dropped and counted; known ones still count.
    @Test func receiversPastTheLimitAreDroppedAndCounted() {
        var engine = Fixture.engine([Fixture.region("store", major: 1)])
        let limit = BeaconEngine.receiverLimit
        for i in 0..<(limit + 50) {
            _ = engine.ingest(Fixture.sighting(1 + Double(i) * 0.001, major: 2, receiver: "relay-\(i)"))
        }
        #expect(engine.counters.receiversRefused == 50)
        _ = engine.ingest(Fixture.sighting(3, major: 1, receiver: "relay-0"))
        _ = engine.ingest(Fixture.sighting(4, major: 1, receiver: "relay-0"))
        #expect(engine.regionStatuses(client: "app").first?.state == .inside)
        #expect(engine.counters.receiversRefused == 50)
    }

    /// Issue 51, item 5: made-up names filled the table, and then a configured receiver heard
    /// for the first time (or added by a reload) had every sighting dropped until a restart.
    /// Configured receivers always keep their place; only the others are bounded.
    @Test func configuredReceiversKeepTheirPlaceWhateverMadeUpNamesCameFirst() {
        let calibrations = ["dock-door": ReceiverCalibration(rssiAt1m: -59)]
        var engine = Fixture.engine([Fixture.region("store", major: 1)], receivers: calibrations)
        let limit = BeaconEngine.receiverLimit
        for i in 0..<(limit + 10) {
            _ = engine.ingest(Fixture.sighting(1 + Double(i) * 0.001, major: 2, receiver: "made-up-\(i)"))
        }
        #expect(engine.counters.receiversRefused == 10)
        _ = engine.ingest(Fixture.sighting(3, major: 1, receiver: "dock-door"))
        _ = engine.ingest(Fixture.sighting(3.5, major: 1, receiver: "dock-door"))
        #expect(engine.counters.receiversRefused == 10, "the configured receiver was refused")
        #expect(engine.regionStatuses(client: "app").first?.state == .inside)
        // Added by a reload after the flood: taken too.
        var site = SiteConfiguration()
        site.receivers = [SiteReceiver(id: "aisle-9", position: Point(x: 0, y: 0), level: 0)]
        _ = engine.reconfigureSite(site, calibrations: calibrations, at: Fixture.at(4))
        _ = engine.ingest(Fixture.sighting(5, major: 1, receiver: "aisle-9"))
        _ = engine.ingest(Fixture.sighting(5.5, major: 1, receiver: "aisle-9"))
        #expect(engine.counters.receiversRefused == 10, "the receiver the reload added was refused")
        _ = engine.ingest(Fixture.sighting(6, major: 2, receiver: "made-up-again"))
        #expect(engine.counters.receiversRefused == 11)
    }
}
