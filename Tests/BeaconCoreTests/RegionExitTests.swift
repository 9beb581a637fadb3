import Testing

@testable import BeaconCore

/// SPEC §3 exit: no sighting ≥ `min_rssi - hysteresis_db` for `exit_timeout`; no flapping.
@Suite struct RegionExitTests {
    /// A region entered at 41 s (outside at 30 s, beacon from 40 s).
    func insideRegion(notifyOnExit: Bool = true) -> Script {
        var s = Script(Fixture.engine([Fixture.region("store", notifyOnExit: notifyOnExit)]))
        s.advance(to: 30)
        s.see(from: 40, to: 41)
        _ = s.take()
        return s
    }

    @Test func exitFiresAtExitTimeoutWithNoFurtherAdvertisements() {
        // Given a region inside, last heard at 41 s
        var s = insideRegion()
        // When only the clock moves
        s.advance(to: 70.999_999)
        #expect(s.lines() == [])
        s.advance(to: 500)
        // Then the exit is at exactly 41 + 30 s, with last_seen and the visit's duration
        #expect(s.lines() == ["71 region.exit app/store last_seen=41 duration=0s"])
    }

    @Test func oneLostPacketNeverExits() {
        var s = insideRegion()
        // 1 Hz beacon for ten minutes with one packet lost every 7 s, and a 20 s hole
        for t in 42...640 where t % 7 != 0 && !(300..<320).contains(t) { s.see(Fixture.sighting(Double(t))) }
        #expect(s.lines() == [])
        s.advance(to: 700)
        #expect(s.lines() == ["670 region.exit app/store last_seen=640 duration=599s"])
    }

    @Test func oneWeakReadingNeverExits() {
        var s = insideRegion()
        for t in 42...200 { s.see(Fixture.sighting(Double(t), rssi: t % 10 == 0 ? -127 : -70)) }
        #expect(s.lines() == [])
    }

    @Test func beaconHoveringAroundMinRSSIDoesNotFlap() {
        // Given a beacon that reads just below min_rssi (-95) for long stretches, with a
        // couple of readings above it every 45 s
        var s = insideRegion()
        for t in 42...600 {
            let rssi = t % 45 < 2 ? -93 : [-96, -99, -97, -98, -100, -96, -97][t % 7]
            s.see(Fixture.sighting(Double(t), rssi: rssi))
        }
        // Then hysteresis (down to -100 dBm) keeps it inside: no exit, no re-enter
        #expect(s.lines() == [])
    }

    @Test func readingsBelowTheHysteresisFloorDoNotKeepItInside() {
        var s = insideRegion()
        s.see(from: 42, to: 120, rssi: -101)
        #expect(s.lines() == ["71 region.exit app/store last_seen=41 duration=0s"])
    }

    @Test func aSightingFromARelaysFastClockIsTakenAtTheDaemonsTime() {
        // Given a region inside, last heard at 41 s, and the daemon's clock at 50 s
        var s = insideRegion()
        // When a relay whose clock is an hour fast reports the beacon
        s.events += s.engine.ingest(Fixture.sighting(3650), notAfter: Fixture.at(50))
        // Then nothing fires: taken at its own time it would have exited at 71 s
        #expect(s.lines() == [])
        #expect(s.engine.counters.clockAheadSightings == 1 && s.engine.now == Fixture.at(50))
        // and it counts as heard at 50 s: the exit is 30 s after that
        s.advance(to: 500)
        #expect(s.lines() == ["80 region.exit app/store last_seen=50 duration=9s"])
    }

    @Test func afterAnExitTheNextVisitEntersAgain() {
        var s = insideRegion()
        s.advance(to: 100)
        s.see(from: 200, to: 201)
        #expect(
            s.lines() == ["71 region.exit app/store last_seen=41 duration=0s", "201 region.enter app/store 42/7 -60"])
    }

    @Test func notifyOnExitFalseLeavesSilently() {
        var s = insideRegion(notifyOnExit: false)
        s.advance(to: 100)
        #expect(s.lines() == [])
        s.see(from: 200, to: 201)
        #expect(s.lines() == ["201 region.enter app/store 42/7 -60"])
    }

    @Test func exitTimersRunWithoutAdvertisementsOnTheDaemonsClock() {
        // The deadline is announced: a runtime that sleeps until nextDeadline fires the exit.
        var engine = insideRegion().engine
        var fired: [Event] = []
        while fired.isEmpty, let deadline = engine.nextDeadline { fired = engine.advance(to: deadline) }
        #expect(fired.map(line) == ["71 region.exit app/store last_seen=41 duration=0s"])
    }
}
