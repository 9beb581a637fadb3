import Testing

@testable import BeaconCore

/// While the gateway's radios hear nothing (a dongle unplugged, bluetoothd restarting),
/// silence is not absence (`BeaconEngine.setBlind`).
@Suite struct BlindRadioTests {
    func insideAndHeard() -> Script { Script.insideAndHeard(dwell: .minutes(5)) }

    @Test func aDongleUnpluggedForMinutesExitsAndEntersNothing() {
        var s = insideAndHeard()
        // Unplugged at 55 s, for three minutes
        s.advance(to: 55)
        s.engine.setBlind(true)
        s.advance(to: 235)
        #expect(s.lines() == [])
        // Plugged back: the beacon, which never left, is heard 3 s later
        s.engine.setBlind(false)
        s.advance(to: 238)
        s.see(from: 238, to: 400)
        // No exit and no second enter; the visit's dwell fires (at 341 s, heard again by then)
        #expect(s.lines() == ["341 region.dwell app/store 5m"])
    }

    @Test func aBeaconThatLeftWhileBlindExitsOnceTheRadiosHearAgain() {
        var s = insideAndHeard()
        s.advance(to: 55)
        s.engine.setBlind(true)
        s.advance(to: 235)
        s.engine.setBlind(false)
        // exit_timeout after the radios hear again, dated exit_timeout after its last sighting
        s.advance(to: 264.9)
        #expect(s.lines() == [])
        s.advance(to: 265)
        #expect(s.lines() == ["80 region.exit app/store last_seen=50 duration=9s"])
    }

    @Test func withoutTheHoldTheSameUnplugExitsAndEntersAgain() {
        var s = insideAndHeard()
        s.advance(to: 238)
        s.see(from: 238, to: 240)
        let lines = s.lines()
        #expect(lines.first == "80 region.exit app/store last_seen=50 duration=9s")
        #expect(lines.contains { $0.contains("region.enter") })
    }

    @Test func anAssetInAZoneIsNotLostWhileBlind() {
        let t0 = AssetTrackerTests.t0
        var (tracker, events) = AssetTrackerTests.cartInsideLeft()
        tracker.setBlind(true, at: t0 + .seconds(12))
        for s in 12..<200 { tracker.tick(at: t0 + .seconds(Int64(s)), events: &events) }
        tracker.setBlind(false, at: t0 + .seconds(200))
        for s in 200..<229 { tracker.tick(at: t0 + .seconds(Int64(s)), events: &events) }
        func conditions() -> [AlarmDefinition.Condition] {
            events.compactMap { if case let .zone(a) = $0.payload { a.condition } else { nil } }
        }
        #expect(conditions() == [.enter], "not lost while blind, nor in the 30 s after")
        // Not heard in the 30 s after the radios hear again: it leaves its zone
        tracker.tick(at: t0 + .seconds(230), events: &events)
        #expect(conditions() == [.enter, .exit])
    }
}
