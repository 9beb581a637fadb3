import Testing

@testable import BeaconCore

/// SPEC §3 enter: `enter_sightings` sightings ≥ `min_rssi` within `enter_window`.
@Suite struct RegionEnterTests {
    /// An engine whose region is already determined outside at 30 s.
    func outsideRegion(_ settings: MonitoringSettings = MonitoringSettings(), notify: Bool = true) -> Script {
        var s = Script(Fixture.engine([Fixture.region("store", notifyOnEntry: notify)], settings: settings))
        s.advance(to: 30)
        _ = s.take()
        return s
    }

    @Test func oneSightingDoesNotEnter() {
        var s = outsideRegion()
        s.see(Fixture.sighting(40))
        s.advance(to: 100)
        #expect(s.lines() == [])
    }

    @Test func twoSightingsWithinTheWindowEnter() {
        var s = outsideRegion()
        s.see(Fixture.sighting(40))
        s.see(Fixture.sighting(45))  // exactly enter_window later
        #expect(s.lines() == ["45 region.enter app/store 42/7 -60"])
    }

    @Test func aSightingOlderThanExitTimeoutIsHistoryNotPresence() {
        // Given a region outside and the engine's clock at 100 s
        var s = outsideRegion()
        s.advance(to: 100)
        // When a relay uploads two sightings it buffered at 40 and 45 s (55 s late)
        s.see(Fixture.sighting(40))
        s.see(Fixture.sighting(45))
        // Then no enter: the beacon may have left a minute ago; they are counted as stale
        #expect(s.lines() == [])
        #expect(s.engine.counters.staleSightings == 2 && s.engine.counters.lateSightings == 0)
        // while one a few seconds late is taken, at the engine's time, and with the next
        // sighting enters
        s.see(Fixture.sighting(96))
        s.see(Fixture.sighting(101))
        #expect(s.lines() == ["101 region.enter app/store 42/7 -60"])
        #expect(s.engine.counters.lateSightings == 1)
    }

    /// A relay's batch arrives a little late, every record older than the engine's clock
    /// (issue 25, item 5): each counts at the time it was heard, so 20 records over two
    /// seconds enter, where taken all at the engine's instant they counted once and a relay
    /// uploading every 5 s never entered a region.
    @Test func aRelaysLateBatchCountsEachRecordAtItsOwnTime() {
        var s = outsideRegion()
        s.advance(to: 100)
        for i in 0..<20 { s.see(Fixture.sighting(97 + Double(i) * 0.1)) }
        #expect(s.lines() == ["100 region.enter app/store 42/7 -60"])
        #expect(s.engine.counters.lateSightings == 20)
    }

    /// A late record heard before the newest local one still counts, in its place in time;
    /// the same instant heard twice (two receivers) still counts once.
    @Test func aLateRecordTakesItsPlaceInTimeAndTheSameInstantCountsOnce() {
        var settings = MonitoringSettings()
        settings.enterSightings = 3
        var s = outsideRegion(settings)
        s.advance(to: 100)
        s.see(Fixture.sighting(100))
        s.see(Fixture.sighting(98))
        s.see(Fixture.sighting(98))
        #expect(s.lines() == [])
        s.see(Fixture.sighting(99))
        #expect(s.lines() == ["100 region.enter app/store 42/7 -60"])
    }

    @Test func sightingsFartherApartThanTheWindowDoNotEnter() {
        var s = outsideRegion()
        for t in stride(from: 40.0, through: 70, by: 5.5) { s.see(Fixture.sighting(t)) }
        #expect(s.lines() == [])
    }

    @Test func sightingsBelowMinRSSIDoNotCount() {
        var s = outsideRegion()
        s.see(from: 40, to: 50, rssi: -96)
        #expect(s.lines() == [])
        s.see(Fixture.sighting(51, rssi: -95))
        s.see(Fixture.sighting(52, rssi: -95))
        #expect(s.lines() == ["52 region.enter app/store 42/7 -95"])
    }

    @Test func onePacketHeardByTwoReceiversCountsOnce() {
        var s = outsideRegion()
        s.see(Fixture.sighting(40, receiver: "hci0"))
        s.see(Fixture.sighting(40, receiver: "hci1"))
        #expect(s.lines() == [])
        s.see(Fixture.sighting(41, receiver: "hci1"))
        #expect(s.lines() == ["41 region.enter app/store 42/7 -60"])
    }

    @Test func enterSightingsIsConfigurable() {
        var settings = MonitoringSettings()
        settings.enterSightings = 4
        settings.enterWindow = .seconds(3)
        var s = outsideRegion(settings)
        s.see(from: 40, to: 42)
        #expect(s.lines() == [])
        s.see(Fixture.sighting(43))
        #expect(s.lines() == ["43 region.enter app/store 42/7 -60"])
    }

    @Test func notifyOnEntryFalseEntersSilentlyAndStillExits() {
        var s = outsideRegion(notify: false)
        s.see(from: 40, to: 50)
        #expect(s.lines() == [])
        s.advance(to: 200)
        #expect(s.lines() == ["80 region.exit app/store last_seen=50 duration=9s"])
    }

    @Test func enterEventCarriesReceiverRSSIAndDistance() {
        var s = outsideRegion()
        s.see(Fixture.sighting(40, rssi: -59, receiver: "hci1"))
        s.see(Fixture.sighting(41, rssi: -59, receiver: "hci1"))
        let events = s.take()
        #expect(events.count == 1)
        guard case let .regionEnter(client, region, beacon, receiver, rssi, distance) = events.first?.payload else {
            Issue.record("expected an enter, got \(events)")
            return
        }
        #expect(client == "app" && region == "store" && beacon == Fixture.beacon)
        #expect(receiver == "hci1" && rssi == -59)
        // The beacon's measured power is -59 dBm at 1 m and it reads -59: 1 m.
        #expect(abs(distance! - 1.0) < 1e-9)
    }
}
