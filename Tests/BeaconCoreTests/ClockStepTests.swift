import Testing

@testable import BeaconCore

/// A step of the wall clock is not time passing (`BeaconEngine.shiftClock`): a gateway
/// without a battery-backed clock boots hours behind and NTP sets it right minutes later.
@Suite struct ClockStepTests {
    static let hour = TimeSpan.seconds(3600)

    func insideAndHeard() -> Script { Script.insideAndHeard(dwell: .minutes(2)) }

    @Test func aStepForwardFiresNoExitAndNoEarlyDwell() {
        // Given a region inside, and the clock set an hour forward at 50.5 s
        var s = insideAndHeard()
        s.engine.shiftClock(by: Self.hour)
        // When the beacon goes on being heard, now on the new clock, until 3,800 s
        s.see(from: 3651, to: 3800)
        // Then no exit and no re-enter: only the dwell, two minutes after the enter (41 s,
        // 3,641 s on the new clock), not at once
        #expect(s.lines() == ["3761 region.dwell app/store 2m"])
        // and the exit, when the beacon leaves, is 30 s after its last sighting; the visit
        // lasted 159 s, not the hour of the step
        s.advance(to: 4000)
        #expect(s.lines() == ["3830 region.exit app/store last_seen=3800 duration=159s"])
    }

    @Test func withoutTheShiftTheSameStepExitsAndEntersAgain() {
        // The failure the shift prevents: the step taken as an hour of silence
        var s = insideAndHeard()
        s.see(from: 3651, to: 3652)
        let lines = s.lines()
        #expect(lines.contains("80 region.exit app/store last_seen=50 duration=9s"))
        #expect(lines.contains { $0.contains("region.enter") })
    }

    @Test func aStepBackHoldsNoTimerUntilTheClockCatchesUp() {
        // Given a region inside, last heard at 50 s, and the clock set back an hour
        var s = insideAndHeard()
        s.engine.shiftClock(by: TimeSpan(nanoseconds: -Self.hour.nanoseconds))
        #expect(s.engine.now < Fixture.at(-3540))
        // When the beacon is gone: the exit is 30 s after its last sighting, on the new clock
        s.advance(to: -3000)
        #expect(s.lines() == ["-3520 region.exit app/store last_seen=-3550 duration=9s"])
    }

    @Test func anAssetIsNotLostAcrossAStep() {
        let t0 = AssetTrackerTests.t0
        var (tracker, inside) = AssetTrackerTests.cartInsideLeft()
        var alerts: [ZoneAlert] = []
        func collect(_ events: [Event]) {
            for e in events { if case let .zone(a) = e.payload { alerts.append(a) } }
        }
        collect(inside)
        #expect(alerts.map(\.condition) == [.enter])
        tracker.shift(by: Self.hour)
        #expect(tracker.fixes[0].lastHeard == t0 + .seconds(11) + Self.hour)
        // The engine's next position tick comes before the next packet: a second of silence
        var events: [Event] = []
        tracker.tick(at: t0 + Self.hour + .seconds(12), events: &events)
        collect(events)
        for s in 13..<24 {
            collect(AssetTrackerTests.step(&tracker, at: Point(x: 2, y: 3), time: t0 + Self.hour + .seconds(Int64(s))))
        }
        // No exit for an hour of "silence", and so no second enter
        #expect(alerts.map(\.condition) == [.enter])
    }

    @Test func theDetectorTellsAStepFromTimePassing() {
        var d = ClockStepDetector()
        let wall = Timestamp.seconds(1_000_000)
        #expect(d.step(wall: wall, elapsed: .seconds(10)) == nil)
        // A minute passes on both clocks, and NTP slews by 20 ms: no step
        #expect(d.step(wall: wall + .seconds(60) + .milliseconds(20), elapsed: .seconds(70)) == nil)
        // The wall clock is set two hours forward (the 20 ms slewed before are not part of it)
        #expect(
            d.step(wall: wall + .seconds(61 + 7200), elapsed: .seconds(71)) == TimeSpan(nanoseconds: 7_199_980_000_000))
        // and back by ninety seconds
        #expect(
            d.step(wall: wall + .seconds(62 + 7200 - 90), elapsed: .seconds(72))
                == TimeSpan(nanoseconds: -90_000_000_000))
    }
}
