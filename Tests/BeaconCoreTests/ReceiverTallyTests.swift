import Testing

@testable import BeaconCore

/// `beacond_receiver_sightings_total` and `…_last_heard_age_seconds` come from the engine's own
/// receiver table: each receiver's sightings counted by runs of the same receiver, its newest
/// time kept, under the table's limit, a configured receiver always counted.
@Suite struct ReceiverTallyTests {
    static let t0 = Timestamp.seconds(1_000)

    static func heard(_ receiver: String, _ s: Int64) -> Sighting {
        Sighting(time: t0 + .seconds(s), receiver: receiver, address: "AA:BB:CC:DD:EE:01", rssi: -60)
    }

    @Test func runsOfOneReceiverAreCountedUnderItsName() {
        var engine = Fixture.engine([])
        engine.tally([Self.heard("hci0", 3), Self.heard("hci0", 1), Self.heard("dock-relay", 2), Self.heard("hci0", 4)])
        engine.tally([Self.heard("dock-relay", 9)])
        #expect(engine.receiverTallies["hci0"] == ReceiverTally(sightings: 3, lastHeard: Self.t0 + .seconds(4)))
        #expect(engine.receiverTallies["dock-relay"] == ReceiverTally(sightings: 2, lastHeard: Self.t0 + .seconds(9)))
        #expect(engine.receiverTallies.count == 2)
    }

    @Test func aReceiverTheEngineTookIsTheOneItCounts() {
        // One table: the receiver a sighting is positioned by is the one tallied.
        var engine = Fixture.engine([Fixture.region("store")])
        let sighting = Fixture.sighting(10)
        _ = engine.ingest(sighting)
        engine.tally([sighting])
        #expect(engine.receiverTallies == [sighting.receiver: ReceiverTally(sightings: 1, lastHeard: sighting.time)])
        #expect(engine.receiverNames == [sighting.receiver])
    }

    @Test func madeUpNamesPastTheLimitAreNotCountedButAConfiguredReceiverIs() {
        var engine = Fixture.engine([], receivers: ["rx-front": ReceiverCalibration()])
        engine.tally((0..<BeaconEngine.receiverLimit).map { Self.heard("made-up-\($0)", 1) })
        engine.tally([Self.heard("one-too-many", 2), Self.heard("rx-front", 3)])
        let tallies = engine.receiverTallies
        #expect(tallies.count == BeaconEngine.receiverLimit + 1)
        #expect(tallies["one-too-many"] == nil)
        #expect(tallies["rx-front"] == ReceiverTally(sightings: 1, lastHeard: Self.t0 + .seconds(3)))
    }
}

/// The engine's receiver table holds each receiver's place among the site's: found once, and
/// found again when a reload places a receiver that had none.
@Suite struct ReceiverPlaceTests {
    typealias T = AssetTrackerTests

    static func heardByE(_ engine: inout BeaconEngine, at t: Timestamp) {
        _ = engine.ingest(Sighting(time: t, receiver: "e", address: "AA:00:00:00:00:01", rssi: -60))
    }

    @Test func aReceiverAReloadPlacesIsUsedFromThenOn() throws {
        let site = T.site(alarms: [])
        var engine = BeaconEngine(
            configuration: EngineConfiguration(receivers: T.calibrations, site: site), start: T.t0)
        Self.heardByE(&engine, at: T.t0 + .seconds(1))
        #expect(engine.tracker?.unplacedReceivers["e"] == 1, "heard, not placed")

        var placed = site
        placed.receivers.append(SiteReceiver(id: "e", position: Point(x: 5, y: 5), level: 0))
        let changed = engine.reconfigureSite(placed, calibrations: T.calibrations, at: T.t0 + .seconds(2))
        #expect(changed)
        Self.heardByE(&engine, at: T.t0 + .seconds(3))
        let tracker = try #require(engine.tracker)
        #expect(tracker.unplacedReceivers["e"] == nil)
        #expect(tracker.states[0].readings[4] != nil, "its reading kept at its place, the fifth receiver")
    }
}
