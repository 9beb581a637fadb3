import Testing

@testable import BeaconCore

/// SPEC §3: state starts unknown; the first determination is `region.state`, never an enter.
@Suite struct RegionStateTests {
    @Test func regionAlreadyInsideAtStartGivesStateAndNoEnter() {
        // Given a region whose beacon is already there when monitoring starts
        var s = Script(Fixture.engine([Fixture.region("store")]))
        // When the beacon is heard at 1 Hz for a minute
        s.see(from: 0, to: 60)
        // Then the first determination is region.state inside, and nothing else
        #expect(s.lines() == ["1 region.state app/store inside"])
    }

    @Test func regionWithNoBeaconIsOutsideAfterExitTimeout() {
        // Given a region and no beacon
        var s = Script(Fixture.engine([Fixture.region("store")], start: 0))
        // When the clock runs past exit_timeout (30 s) without any advertisement
        s.advance(to: 29.999)
        #expect(s.lines() == [])
        s.advance(to: 100)
        // Then the region is determined outside at exactly 30 s, once
        #expect(s.lines() == ["30 region.state app/store outside"])
    }

    @Test func enterNeedsARealOutsideToInsideChange() {
        // Given a region determined outside
        var s = Script(Fixture.engine([Fixture.region("store")]))
        s.advance(to: 31)
        _ = s.take()
        // When the beacon arrives
        s.see(from: 40, to: 45)
        // Then it enters, with the sighting's identity and rssi
        #expect(s.lines() == ["41 region.enter app/store 42/7 -60"])
    }

    @Test func weakSightingsDuringUnknownDoNotPostponeOutside() {
        // Given readings below min_rssi (-95) from the start
        var s = Script(Fixture.engine([Fixture.region("store")]))
        s.see(from: 0, to: 40, rssi: -97)
        // Then they neither enter nor keep the region unknown
        #expect(s.lines() == ["30 region.state app/store outside"])
    }

    @Test func requestStateReportsTheCurrentStateNow() {
        var engine = Fixture.engine([Fixture.region("store")])
        // Unknown before any determination
        var change = engine.requestState(client: "app", region: "store", at: Fixture.at(5))
        #expect(change.events.map(line) == ["5 region.state app/store unknown"])
        _ = engine.ingest(Fixture.sighting(6))
        _ = engine.ingest(Fixture.sighting(7))
        change = engine.requestState(client: "app", region: "store", at: Fixture.at(8))
        #expect(change.events.map(line) == ["8 region.state app/store inside"])
        change = engine.requestState(client: "app", region: "nope", at: Fixture.at(9))
        #expect(change.failure == .regionNotFound)
        #expect(change.events.isEmpty)
    }
}
