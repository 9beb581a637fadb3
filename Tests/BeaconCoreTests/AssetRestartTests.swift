import Testing

@testable import BeaconCore

/// Zone memberships outlive a restart (`AssetSnapshot`), as region states do (SPEC §3).
@Suite struct AssetRestartTests {
    typealias T = AssetTrackerTests
    static let alarm = AlarmDefinition(id: "watch", zones: ["left"], on: [.enter, .exit, .dwell], dwell: .seconds(60))

    /// A cart on the left for 20 s (entered, dwell not yet due), then the daemon stops.
    func snapshotInside() -> [AssetSnapshot] {
        var tracker = AssetTracker(
            site: T.site(alarms: [Self.alarm]), calibrations: T.calibrations, lostAfter: .seconds(30), start: T.t0)
        var alerts: [ZoneAlert] = []
        for s in 0..<20 {
            alerts += zoneAlerts(T.step(&tracker, at: Point(x: 2, y: 5), time: T.t0 + .seconds(Int64(s))))
        }
        #expect(alerts.map(\.condition) == [.enter])
        return tracker.snapshot()
    }

    /// A new tracker at `restart` seconds with the snapshot put back.
    func restarted(at restart: Int64, from snapshot: [AssetSnapshot], site: SiteConfiguration? = nil) -> AssetTracker {
        var tracker = AssetTracker(
            site: site ?? T.site(alarms: [Self.alarm]), calibrations: T.calibrations, lostAfter: .seconds(30),
            start: T.t0 + .seconds(restart))
        for s in snapshot { _ = tracker.restore(s, now: T.t0 + .seconds(restart)) }
        return tracker
    }

    func zoneAlerts(_ events: [Event]) -> [ZoneAlert] {
        events.compactMap { if case let .zone(a) = $0.payload { return a } else { return nil } }
    }

    func run(_ tracker: inout AssetTracker, at p: Point, seconds: Range<Int64>) -> [(Int64, ZoneAlert)] {
        seconds.flatMap { s in zoneAlerts(T.step(&tracker, at: p, time: T.t0 + .seconds(s))).map { (s, $0) } }
    }

    @Test func theSnapshotHoldsTheMembership() throws {
        let snapshot = snapshotInside()
        let s = try #require(snapshot.first)
        #expect(snapshot.count == 1 && s.asset == "cart" && s.zones.map(\.zone) == ["left"])
        #expect(s.zones[0].shape == "polygon 0: 0.0 0.0, 5.0 0.0, 5.0 10.0, 0.0 10.0" && s.zones[0].dwellFired == [])
        #expect(s.lastHeard == T.t0 + .seconds(19) && abs((s.position?.x ?? 99) - 2) < 1)
    }

    /// SPEC §10 across a restart: the cart entered about 2 s in, the daemon stopped at 20 s,
    /// came back at 25 s, and the cart left at 60 s: one `zone.visit` from its enter before the
    /// restart to its leaving after it (the same walk without a restart tells the same one).
    @Test func aVisitOpenAtARestartIsToldOnceFromItsEnter() {
        var tracker = restarted(at: 25, from: snapshotInside())
        var events: [Event] = []
        for s in Int64(25)..<60 { events += T.step(&tracker, at: Point(x: 2, y: 5), time: T.t0 + .seconds(s)) }
        for s in Int64(60)..<140 { events += T.step(&tracker, at: Point(x: 8, y: 5), time: T.t0 + .seconds(s)) }
        let visits = events.compactMap { if case let .zoneVisit(v) = $0.payload { v } else { nil } }
        #expect(visits.count == 1, "\(visits)")
        guard let v = visits.first else { return }
        #expect((v.entered - T.t0).seconds <= 5, "entered \((v.entered - T.t0).seconds) s after the start")
        #expect(abs((v.left - T.t0).seconds - 60) <= 3, "left \((v.left - T.t0).seconds) s after the start")
    }

    @Test func aCartStillInsideAfterARestartRaisesNoSecondEnterAndItsDwellComesOnce() {
        var tracker = restarted(at: 25, from: snapshotInside())
        let alerts = run(&tracker, at: Point(x: 2, y: 5), seconds: 25..<100)
        // The dwell of the same visit, a minute after its enter (about 2 s in), and nothing else
        #expect(alerts.map(\.1.condition) == [.dwell])
        #expect((alerts.first?.0 ?? 0) >= 60 && (alerts.first?.0 ?? 0) <= 66)
    }

    @Test func aRebootLongerThanExitTimeoutRaisesNothingForACartThatStayed() {
        // Last heard at 19 s, back at 100 s: 81 s of downtime, over the 30 s exit_timeout
        var tracker = restarted(at: 100, from: snapshotInside())
        // The first ticks come before the first packets (BlueZ or the relays still starting)
        var events: [Event] = []
        for s in Int64(100)...104 { tracker.tick(at: T.t0 + .seconds(s), events: &events) }
        // No exit and no second enter: only the visit's dwell, due during the downtime
        let alerts = zoneAlerts(events) + run(&tracker, at: Point(x: 2, y: 5), seconds: 105..<120).map(\.1)
        #expect(alerts.map(\.condition) == [.dwell])
    }

    @Test func withoutTheSnapshotTheSameRestartEntersAgain() {
        var tracker = restarted(at: 25, from: [])
        #expect(run(&tracker, at: Point(x: 2, y: 5), seconds: 25..<40).map(\.1.condition) == [.enter])
    }

    @Test func aCartThatLeftDuringTheDowntimeGetsItsExit() {
        var tracker = restarted(at: 25, from: snapshotInside())
        let alerts = run(&tracker, at: Point(x: 8, y: 5), seconds: 25..<40)
        #expect(alerts.map(\.1.condition) == [.exit])
    }

    @Test func aCartNeverHeardAgainLeavesItsZonesAtItsLastPosition() {
        var tracker = restarted(at: 25, from: snapshotInside())
        var events: [Event] = []
        for s in Int64(25)...70 { tracker.tick(at: T.t0 + .seconds(s), events: &events) }
        let alerts = zoneAlerts(events)
        // Lost 30 s after the restart (25 s), its chance to be heard again; 30 s after it was
        // last heard (19 s) would have fallen in it
        #expect(
            alerts.map(\.condition) == [.exit]
                && events.first { if case .zone = $0.payload { true } else { false } }?.time == T.t0 + .seconds(55))
        #expect(abs((alerts.first?.position?.x ?? 99) - 2) < 1)
    }

    @Test func aRedefinedZoneIsNotRestored() {
        var site = T.site(alarms: [Self.alarm])
        site.zones[0].shape = .polygon(level: 0, points: [Point(x: 0, y: 0), Point(x: 6, y: 0), Point(x: 6, y: 10)])
        var tracker = AssetTracker(site: site, calibrations: T.calibrations, lostAfter: .seconds(30), start: T.t0)
        #expect(tracker.restore(snapshotInside()[0], now: T.t0 + .seconds(25)) == false)
    }
}
