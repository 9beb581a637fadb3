import Testing

@testable import BeaconCore

/// SPEC §3: state survives a restart — no second enter, and exits at their own time.
@Suite struct RegionRestartTests {
    /// Runs an engine to 100 s with the beacon inside since 41 s and a 2 min dwell, and
    /// returns its snapshot.
    func snapshotAfterAVisit(lastSighting: Double = 100) -> [RegionSnapshot] {
        var s = Script(Fixture.engine([Fixture.region("store", dwell: [.seconds(30), .minutes(5)])]))
        s.advance(to: 30)
        s.see(from: 40, to: lastSighting)
        #expect(
            s.lines() == [
                "30 region.state app/store outside", "41 region.enter app/store 42/7 -60",
                "71 region.dwell app/store 30s",
            ])
        return s.engine.snapshot()
    }

    func restarted(at seconds: Double, from snapshot: [RegionSnapshot], spec: RegionSpec? = nil) -> Script {
        var engine = Fixture.engine(
            [spec ?? Fixture.region("store", dwell: [.seconds(30), .minutes(5)])], start: seconds)
        for s in snapshot { engine.restore(s) }
        return Script(engine)
    }

    @Test func aRegionThatStayedInsideGivesNoSecondEnter() {
        // Given a snapshot taken inside, and a restart 10 s later with the beacon still there
        var s = restarted(at: 110, from: snapshotAfterAVisit())
        s.see(from: 111, to: 400)
        // Then no enter and no region.state; the 5 min dwell of the same visit still fires
        #expect(s.lines() == ["341 region.dwell app/store 5m"])
    }

    @Test func aRegionWhoseBeaconLeftDuringTheDowntimeExitsAtItsOwnTime() {
        // Given the beacon last seen at 100 s and the daemon back at 200 s
        var s = restarted(at: 200, from: snapshotAfterAVisit())
        // When exit_timeout passes after the restart with no sighting (its chance to be heard)
        s.advance(to: 229.9)
        #expect(s.lines() == [])
        s.advance(to: 230)
        // Then the exit is dated 130 s: exit_timeout after the last sighting
        #expect(s.lines() == ["130 region.exit app/store last_seen=100 duration=59s"])
    }

    @Test func aRebootLongerThanExitTimeoutExitsAndEntersNothing() {
        // Given the beacon last seen at 100 s, a power cut, and the daemon back at 200 s
        var s = restarted(at: 200, from: snapshotAfterAVisit())
        // When the beacon, which never left, is heard again 8 s after the restart
        s.advance(to: 207)
        s.see(from: 208, to: 400)
        // Then no exit and no second enter; the 5 min dwell of the same visit still fires
        #expect(s.lines() == ["341 region.dwell app/store 5m"])
    }

    @Test func aClockBehindTheSavedStateExitsAfterTheTimeoutNotWhenItCatchesUp() {
        // Given the beacon last seen at 100 s, and the daemon back on a clock an hour behind
        // (no battery-backed clock: it booted at the time it last saved, before the visit)
        var s = restarted(at: -3500, from: snapshotAfterAVisit())
        // When the beacon is gone: the exit is exit_timeout after the restart, not at 130 s
        s.advance(to: -3000)
        #expect(s.lines() == ["-3470 region.exit app/store last_seen=-3500 duration=0s"])
    }

    @Test func aRedefinedRegionStartsAfresh() {
        let snapshot = snapshotAfterAVisit()
        var engine = Fixture.engine([Fixture.region("store", major: 42)], start: 110)
        let restored = engine.restore(snapshot[0])
        #expect(!restored)
        #expect(engine.regionStatuses(client: "app").map(\.state) == [.unknown])
    }

    @Test func snapshotsListEveryRegionWithItsState() {
        let snapshot = snapshotAfterAVisit()
        #expect(snapshot.count == 1)
        #expect(snapshot[0].state == .inside && snapshot[0].lastSeen == Fixture.at(100))
        #expect(snapshot[0].enteredAt == Fixture.at(41) && snapshot[0].dwellsFired == 1)
    }
}
