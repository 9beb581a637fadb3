import Testing

@testable import BeaconCore

/// A start after a `kill -9` (issue 61, M3, M5, M6): what it stores and resumes makes the
/// counting agree with the `zone.visit` events, to the millisecond.
@Suite struct CountingRestartTests {
    typealias T = AssetTrackerTests
    typealias R = AssetRestartTests

    static func visits(_ events: [Event]) -> [ZoneVisit] {
        events.compactMap { if case let .zoneVisit(v) = $0.payload { v } else { nil } }
    }

    /// Every transition the tracker made, held ones too, in the order it stores them.
    static func drained(_ tracker: inout AssetTracker) -> [ZoneTransition] {
        tracker.releaseSettled(upTo: Timestamp(nanoseconds: .max))
        defer { tracker.transitions = [] }
        return tracker.transitions
    }

    @Test func aVisitTheHistoryToldIsClosedAtItsLeftNotResumed() {
        let entered = T.t0 + .milliseconds(2_115)
        let counted = [
            ZoneHours.OpenVisit(zone: "left", asset: "cart", entered: entered, visit: true),
            ZoneHours.OpenVisit(zone: "left", asset: "pallet", entered: T.t0 + .seconds(5), visit: true),
            ZoneHours.OpenVisit(zone: "left", asset: "cart", entered: T.t0 + .seconds(1)),
        ]
        // As the history has it: to the millisecond.
        let told = [
            ZoneVisit(asset: "cart", zone: "left", entered: T.t0 + .milliseconds(2_115), left: T.t0 + .seconds(40))
        ]
        let restart = ZoneRollup.restart(counted: counted, told: told)
        #expect(restart.closed == [ZoneVisit(asset: "cart", zone: "left", entered: entered, left: T.t0 + .seconds(40))])
        #expect(restart.resumed == Array(counted.dropFirst()))
        #expect(
            restart.transitions == [
                ZoneTransition(zone: "left", asset: "cart", entered: false, time: T.t0 + .seconds(40), visit: true)
            ])
    }

    @Test func fixesAreStoredInTheOrderOfTheirTimesAndNoneBeforeTheirZonesFloor() {
        let floors = ZoneRollup.floors([
            ZoneTransition(zone: "dock", asset: "a", entered: true, time: T.t0 + .seconds(30)),
            ZoneTransition(zone: "dock", asset: "b", entered: true, time: T.t0 + .seconds(20)),
        ])
        #expect(floors == ["dock": T.t0 + .seconds(30)])
        let fixes = [
            ZoneTransition(zone: "dock", asset: "a", entered: false, time: T.t0 + .seconds(60)),
            ZoneTransition(zone: "dock", asset: "c", entered: true, time: T.t0 + .seconds(10)),
            ZoneTransition(zone: "till", asset: "c", entered: true, time: T.t0 + .seconds(50)),
        ]
        #expect(
            ZoneRollup.ordered(fixes, floors: floors) == [
                ZoneTransition(zone: "dock", asset: "c", entered: true, time: T.t0 + .seconds(30)),
                ZoneTransition(zone: "till", asset: "c", entered: true, time: T.t0 + .seconds(50)),
                ZoneTransition(zone: "dock", asset: "a", entered: false, time: T.t0 + .seconds(60)),
            ])
    }

    /// The cart inside since 2 s, the daemon killed at 20 s (its visit's enter still settling,
    /// so not counted) and started at 25 s, when the start ended another asset's visit in the
    /// same zone (a fix at 25 s). Its restored visit would tell its enter at 2 s after that
    /// fix, and the counting — which holds a zone's transitions in order — would count it from
    /// 25 s while `zone.visit` says 2 s. Anchored, both say 25 s.
    @Test func aRestoredVisitBeginsNoEarlierThanItsZonesCounting() throws {
        var tracker = R().restarted(at: 25, from: R().snapshotInside())
        tracker.recordsTransitions = true
        let fix = ZoneTransition(zone: "left", asset: "pallet", entered: false, time: T.t0 + .seconds(25), visit: true)
        let open = [ZoneHours.OpenVisit(zone: "left", asset: "pallet", entered: T.t0, visit: true)]
        tracker.anchorRestoredVisits(from: ZoneRollup.floors([fix]), closed: [])
        var events: [Event] = []
        for s in Int64(25)..<60 { events += T.step(&tracker, at: Point(x: 2, y: 5), time: T.t0 + .seconds(s)) }
        for s in Int64(60)..<140 { events += T.step(&tracker, at: Point(x: 8, y: 5), time: T.t0 + .seconds(s)) }
        let told = try #require(Self.visits(events).first)
        #expect(told.entered == T.t0 + .seconds(25))
        let stored = [fix] + Self.drained(&tracker).filter(\.visit)
        let hour = ZoneBucketStats.hour(of: T.t0)
        let (stats, _) = ZoneHours.compute(
            hour: hour, until: hour + .hours(1), zones: ["left"], open: open, transitions: stored)
        #expect(stats.first?.visits == 1)
        #expect(stats.first?.dwells == [25, told.dwell.seconds].sorted(), "the counting's dwell is the told one")
    }

    /// A counted visit resumed for an asset the saved state did not place and that is never
    /// heard again: told `lostAfter` after the start, not left open in the counting for ever.
    @Test func aResumedVisitOfAnAssetNeverHeardIsToldAfterLostAfter() {
        var tracker = AssetTracker(
            site: T.site(alarms: []), calibrations: T.calibrations, lostAfter: .seconds(30), start: T.t0 + .seconds(100)
        )
        tracker.resumeCountedVisits(
            [ZoneHours.OpenVisit(zone: "left", asset: "cart", entered: T.t0 + .seconds(10), visit: true)],
            now: T.t0 + .seconds(100))
        var events: [Event] = []
        for s in Int64(100)..<140 { tracker.tick(at: T.t0 + .seconds(s), events: &events) }
        let told = Self.visits(events)
        #expect(told.count == 1, "\(told)")
        #expect(told.first?.entered == T.t0 + .seconds(10))
        #expect(told.first.map { $0.left >= T.t0 + .seconds(100) } == true)
    }
}

extension CountingRestartTests {
    /// A visit whose enter and telling both fell in the changes a kill lost: told, and now
    /// counted whole; one whose enter is stored, or from before the counting's hour, is not.
    @Test func aToldVisitNeverCountedIsCountedWhole() {
        let hour = T.t0
        let told = [
            ZoneVisit(asset: "cart", zone: "left", entered: hour + .seconds(100), left: hour + .seconds(130)),
            ZoneVisit(asset: "pallet", zone: "left", entered: hour + .seconds(50), left: hour + .seconds(90)),
            ZoneVisit(asset: "crate", zone: "left", entered: hour - .seconds(50), left: hour + .seconds(20)),
        ]
        let enters = [
            ZoneTransition(zone: "left", asset: "pallet", entered: true, time: hour + .seconds(50), visit: true)
        ]
        let restart = ZoneRollup.restart(counted: [], told: told, enters: enters, countedFrom: hour)
        #expect(restart.uncounted == [told[0]])
        #expect(restart.transitions.map(\.time) == [hour + .seconds(100), hour + .seconds(130)])
    }
}
