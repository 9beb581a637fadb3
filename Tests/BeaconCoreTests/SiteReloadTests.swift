import Testing

@testable import BeaconCore

/// A SIGHUP that changes receivers, assets, zones or alarms builds a new tracker that adopts
/// the old one's assets (`BeaconEngine.reconfigureSite`). What a restart keeps — memberships by
/// asset and zone id, dwell alerts already sent by alarm id (`AssetSnapshot`) — a reload must
/// keep too: an operator adding an alarm must not get every parked cart's alerts again.
@Suite struct SiteReloadTests {
    typealias T = AssetTrackerTests
    static let dwell = AlarmDefinition(id: "parked", zones: ["left"], on: [.enter, .dwell], dwell: .seconds(5))

    /// The cart 12 s inside the left zone under `alarms` (entered, and dwelled if asked).
    static func cartParked(alarms: [AlarmDefinition]) -> (tracker: AssetTracker, alerts: [ZoneAlert]) {
        var tracker = AssetTracker(
            site: T.site(alarms: alarms), calibrations: T.calibrations, lostAfter: .seconds(30), start: T.t0)
        var events: [Event] = []
        for s in 0..<12 { events += T.step(&tracker, at: Point(x: 2, y: 3), time: T.t0 + .seconds(Int64(s))) }
        return (tracker, alerts(events))
    }

    static func alerts(_ events: [Event]) -> [ZoneAlert] {
        events.compactMap { if case let .zone(a) = $0.payload { return a } else { return nil } }
    }

    /// Reloads `old` as `site`, then hears the cart where it was for another 20 s.
    static func reloadAndStay(_ old: AssetTracker, as site: SiteConfiguration) -> [ZoneAlert] {
        var tracker = AssetTracker(site: site, calibrations: T.calibrations, lostAfter: .seconds(30), start: T.t0)
        tracker.adopt(from: old)
        var events: [Event] = []
        for s in Int64(12)..<32 { events += T.step(&tracker, at: Point(x: 2, y: 3), time: T.t0 + .seconds(s)) }
        return alerts(events)
    }

    @Test func addingAnAlarmSendsNoDwellAlertASecondTime() {
        let (old, before) = Self.cartParked(alarms: [Self.dwell])
        #expect(before.map(\.condition) == [.enter, .dwell])
        let other = AlarmDefinition(id: "traffic", zones: ["left"], on: [.enter, .exit])
        // Listed first, so that the dwell alarm's position in the list changes too
        let after = Self.reloadAndStay(old, as: T.site(alarms: [other, Self.dwell]))
        #expect(after.isEmpty, "after the reload: \(after.map { "\($0.alarm) \($0.condition)" })")
    }

    @Test func aDwellAlarmGivenANewDurationFiresAtIt() {
        let (old, _) = Self.cartParked(alarms: [Self.dwell])
        var longer = Self.dwell
        longer.dwell = .seconds(25)
        let after = Self.reloadAndStay(old, as: T.site(alarms: [longer]))
        #expect(after.map(\.condition) == [.dwell] && after.first?.dwell == .seconds(25))
    }

    /// A tag swapped on the cart (a new address for the same asset id) is the same cart in the
    /// same zone, as a restart treats it.
    @Test func anAssetWhoseTagChangesStaysInItsZones() {
        let (old, before) = Self.cartParked(alarms: [Self.dwell])
        #expect(before.map(\.condition) == [.enter, .dwell])
        var site = T.site(alarms: [Self.dwell])
        site.assets[0].tag = .address("AA:00:00:00:00:02")
        #expect(Self.reloadAndStay(old, as: site).isEmpty)
    }

    /// As after a restart (`AssetRestartTests.aRedefinedZoneIsNotRestored`): a zone drawn
    /// anew is a new zone, and the cart in it enters it.
    @Test func aRedrawnZoneIsEnteredAfresh() {
        let (old, _) = Self.cartParked(alarms: [Self.dwell])
        var site = T.site(alarms: [Self.dwell])
        site.zones[0].shape = .polygon(
            level: 0, points: [Point(x: 0, y: 0), Point(x: 6, y: 0), Point(x: 6, y: 10), Point(x: 0, y: 10)])
        #expect(Self.reloadAndStay(old, as: site).map(\.condition) == [.enter, .dwell])
    }

    /// Through the engine, as the daemon's SIGHUP calls it: the cart that entered before the
    /// reload is still in, and beacons find their asset again.
    @Test func theEngineKeepsACartInItsZoneAcrossAReload() {
        var engine = QuietGapTests.heardForTwentySeconds()
        let other = AlarmDefinition(id: "traffic", zones: ["left"], on: [.enter, .exit])
        let changed = engine.reconfigureSite(
            T.site(alarms: [other, QuietGapTests.alarm]), calibrations: T.calibrations, at: Fixture.at(20.5))
        #expect(changed)
        var events: [Event] = []
        for s in 21...40 { events += QuietGapTests.hear(&engine, at: Double(s)) }
        events += engine.advance(to: Fixture.at(41))
        #expect(Self.alerts(events).isEmpty)
        #expect(engine.tracker?.fixes.first?.fix?.zones == ["left"])
    }

    /// SPEC §10: a visit under way in a zone the reload removes is told as ended there
    /// (`zone.visit`), and its exit kept for the analytics; the zone kept, nothing is told.
    @Test func aVisitInAZoneTheReloadRemovesIsToldAtTheReload() throws {
        var old = AssetTracker(
            site: T.site(alarms: []), calibrations: T.calibrations, lostAfter: .seconds(60), start: T.t0)
        old.recordsTransitions = true
        for s in 0..<60 { _ = T.step(&old, at: Point(x: 2, y: 3), time: T.t0 + .seconds(Int64(s))) }
        let reload = T.t0 + .seconds(60)
        var withoutZone = T.site(alarms: [])
        withoutZone.zones.removeFirst()
        for (site, told) in [(T.site(alarms: []), false), (withoutZone, true)] {
            var fresh = AssetTracker(site: site, calibrations: T.calibrations, lostAfter: .seconds(60), start: reload)
            fresh.adopt(from: old)
            var events: [Event] = []
            fresh.endVisits(leftBy: old, at: reload, events: &events)
            let visits = events.compactMap { if case let .zoneVisit(v) = $0.payload { v } else { nil } }
            #expect(visits.count == (told ? 1 : 0), "\(visits)")
            guard told, let visit = visits.first else { continue }
            #expect(visit.zone == "left" && visit.left == reload && visit.dwell >= .seconds(50), "\(visit)")
            let exits = fresh.held.filter { $0.visit && !$0.entered }
            #expect(exits.map(\.time) == [reload], "the analytics' exit at the reload")
        }
    }
}
