import Testing

@testable import BeaconCore

/// SPEC §3: per-client region limit, and replacement of a region with the same id.
@Suite struct RegionLimitTests {
    func twentyRegions() -> [RegionSpec] {
        (1...20).map { Fixture.region("r\($0)", major: UInt16($0)) }
    }

    @Test func the21stRegionFailsAndChangesNothing() {
        // Given a client at its limit of 20, with r1 inside
        var engine = Fixture.engine(twentyRegions())
        _ = engine.ingest(Fixture.sighting(0, major: 1))
        _ = engine.ingest(Fixture.sighting(1, major: 1))
        let before = engine.regionStatuses(client: "app")
        // When it registers a 21st id
        let change = engine.monitor(client: "app", region: Fixture.region("r21", major: 21), at: Fixture.at(2))
        // Then region.failed (region_limit_exceeded), and its regions are exactly as before
        #expect(change.failure == .regionLimitExceeded)
        #expect(change.events.map(line) == ["2 region.failed app/r21 region_limit_exceeded"])
        #expect(engine.regionStatuses(client: "app") == before)
        // and the refused region is not monitored
        var s = Script(engine)
        s.see(from: 3, to: 100, major: 21)
        #expect(s.lines().filter { $0.contains("r21") } == [])
    }

    @Test func theLimitIsPerClient() {
        var engine = Fixture.engine(twentyRegions())
        let change = engine.monitor(client: "other", region: Fixture.region("r1"), at: Fixture.at(1))
        #expect(change.failure == nil)
        #expect(engine.clientIDs == ["app", "other"])
    }

    @Test func registeringAnExistingIdAtTheLimitReplacesIt() {
        var engine = Fixture.engine(twentyRegions())
        let change = engine.monitor(client: "app", region: Fixture.region("r20", major: 99), at: Fixture.at(1))
        #expect(change.failure == nil)
        #expect(engine.regionStatuses(client: "app").last?.spec.major == 99)
        #expect(engine.regionStatuses(client: "app").count == 20)
    }

    @Test func replacingARegionResetsItToUnknown() {
        // Given a region that is inside
        var s = Script(Fixture.engine([Fixture.region("store")]))
        s.see(from: 0, to: 10)
        #expect(s.lines() == ["1 region.state app/store inside"])
        // When it is registered again with the same id
        s.events +=
            s.engine.monitor(client: "app", region: Fixture.region("store", major: 42), at: Fixture.at(10.5)).events
        #expect(s.engine.regionStatuses(client: "app").map(\.state) == [.unknown])
        // Then its next determination is a region.state again, not an enter
        s.see(from: 11, to: 20)
        #expect(s.lines() == ["12 region.state app/store inside"])
    }

    @Test func theOldRegionsTimersDieWithIt() {
        // A replaced region's pending exit must not fire for the new one.
        var s = Script(Fixture.engine([Fixture.region("store")]))
        s.see(from: 0, to: 1)
        s.events += s.engine.monitor(client: "app", region: Fixture.region("store"), at: Fixture.at(2)).events
        s.advance(to: 31.5)
        // The new one has heard nothing since 2 s: outside at 32, and the old exit (at 31) never fires
        s.advance(to: 40)
        #expect(s.lines() == ["1 region.state app/store inside", "32 region.state app/store outside"])
    }

    @Test func stopMonitoringRemovesTheRegion() {
        var engine = Fixture.engine([Fixture.region("store")])
        let first = engine.stopMonitoring(client: "app", region: "store")
        let second = engine.stopMonitoring(client: "app", region: "store")
        #expect(first && !second)
        var s = Script(engine)
        s.see(from: 0, to: 100)
        #expect(s.lines() == [])
    }

    @Test func configuredRegionsOverTheLimitFailAtStart() {
        var settings = MonitoringSettings()
        settings.regionLimit = 2
        var engine = Fixture.engine(
            [Fixture.region("a"), Fixture.region("b"), Fixture.region("c")], settings: settings)
        #expect(engine.advance(to: Fixture.at(0)).map(line) == ["0 region.failed app/c region_limit_exceeded"])
    }
}
