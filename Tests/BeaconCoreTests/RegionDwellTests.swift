import Testing

@testable import BeaconCore

/// SPEC §3 dwell: each configured dwell fires once per visit, on the daemon's clock.
@Suite struct RegionDwellTests {
    func engine(_ dwell: [TimeSpan]) -> Script {
        var s = Script(Fixture.engine([Fixture.region("store", dwell: dwell)]))
        s.advance(to: 30)
        _ = s.take()
        return s
    }

    @Test func dwellFiresOncePerVisit() {
        var s = engine([.minutes(2)])
        s.see(from: 40, to: 400)
        #expect(
            s.lines() == ["41 region.enter app/store 42/7 -60", "161 region.dwell app/store 2m"])
    }

    @Test func eachConfiguredDwellFiresInOrder() {
        var s = engine([.minutes(10), .minutes(2)])
        s.see(from: 40, to: 700, every: 5)
        #expect(
            s.lines() == [
                "45 region.enter app/store 42/7 -60", "165 region.dwell app/store 2m", "645 region.dwell app/store 10m",
            ])
    }

    @Test func dwellFiresWithoutAnyAdvertisementAtThatMoment() {
        var s = engine([.seconds(20)])
        s.see(from: 40, to: 41)
        s.advance(to: 65)
        #expect(s.lines() == ["41 region.enter app/store 42/7 -60", "61 region.dwell app/store 20s"])
    }

    @Test func aVisitThatEndsBeforeTheDwellHasNone() {
        var s = engine([.minutes(2)])
        s.see(from: 40, to: 60)
        s.advance(to: 400)
        #expect(
            s.lines() == ["41 region.enter app/store 42/7 -60", "90 region.exit app/store last_seen=60 duration=19s"])
    }

    @Test func theNextVisitDwellsAgain() {
        var s = engine([.seconds(30)])
        s.see(from: 40, to: 80)
        s.advance(to: 200)
        s.see(from: 300, to: 340)
        #expect(
            s.lines() == [
                "41 region.enter app/store 42/7 -60", "71 region.dwell app/store 30s",
                "110 region.exit app/store last_seen=80 duration=39s", "301 region.enter app/store 42/7 -60",
                "331 region.dwell app/store 30s",
            ])
    }

    @Test func dwellCountsFromTheFirstDeterminationWhenAlreadyInside() {
        var s = Script(Fixture.engine([Fixture.region("store", dwell: [.seconds(30)])]))
        s.see(from: 0, to: 40)
        #expect(s.lines() == ["1 region.state app/store inside", "31 region.dwell app/store 30s"])
    }
}
