import Testing

@testable import BeaconCore

/// SPEC §8: a zone's hour — visits, distinct assets, time-weighted occupancy, asset-minutes and
/// the dwell of the visits that ended — from the visits open at its start and its transitions.
struct ZoneHoursTests {
    static let hour = Timestamp.seconds(1_763_805_600)  // 10:00 UTC

    static func at(_ minutes: Double) -> Timestamp { hour + TimeSpan(nanoseconds: Int64(minutes * 60e9)) }

    /// A visit's enter or exit (SPEC §10), or with `visit: false` the live membership's.
    static func move(_ asset: String, _ entered: Bool, _ minutes: Double, zone: String = "dock", visit: Bool = true)
        -> ZoneTransition
    {
        ZoneTransition(zone: zone, asset: asset, entered: entered, time: at(minutes), visit: visit)
    }

    /// Each visit's transition with the live membership's at the same time.
    static func withLive(_ transitions: [ZoneTransition]) -> [ZoneTransition] {
        transitions.flatMap { t in [t, ZoneTransition(zone: t.zone, asset: t.asset, entered: t.entered, time: t.time)] }
    }

    /// A pallet in the dock since 9:30 leaves at 10:15; a cart comes at 10:10 and goes at
    /// 10:40; a second pallet comes at 10:50 and is still there at 11:00.
    @Test func anHourOfTheDockIsCountedFromItsVisits() throws {
        let (stats, open) = ZoneHours.compute(
            hour: Self.hour, until: Self.at(60), zones: ["dock", "till"],
            open: [true, false].map {
                ZoneHours.OpenVisit(zone: "dock", asset: "pallet-1", entered: Self.at(-30), visit: $0)
            },
            transitions: Self.withLive([
                Self.move("cart-7", true, 10), Self.move("pallet-1", false, 15), Self.move("cart-7", false, 40),
                Self.move("pallet-2", true, 50),
            ]))
        let dock = try #require(stats.first { $0.zone == "dock" })
        #expect(dock.visits == 2, "enters within the hour: the cart and the second pallet")
        #expect(dock.assets == 3)
        // 15 + 30 + 10 asset-minutes.
        #expect(abs(dock.assetMinutes - 55) < 1e-9)
        #expect(abs(dock.occupancyMean - 55.0 / 60) < 1e-9)
        #expect(dock.occupancyMax == 2, "10:10–10:15")
        // The pallet's whole visit (45 min) and the cart's (30 min), ascending.
        #expect(dock.dwells == [1800, 2700])
        #expect(dock.dwellP50 == 1800 && dock.dwellP90 == 2700 && dock.dwellMax == 2700)
        let till = try #require(stats.first { $0.zone == "till" })
        #expect(till.visits == 0 && till.assets == 0 && till.occupancyMean == 0 && till.dwells.isEmpty)
        #expect(
            open
                == [false, true].map {
                    ZoneHours.OpenVisit(zone: "dock", asset: "pallet-2", entered: Self.at(50), visit: $0)
                })
    }

    /// SPEC §10: a cart whose live membership flickers at the edge (in, out, in, out) on one
    /// visit is one visit with one dwell and the visit's minutes; the occupancy is the live
    /// membership's, the flicker included.
    @Test func visitsAndOccupancyAreCountedApart() throws {
        let (stats, open) = ZoneHours.compute(
            hour: Self.hour, until: Self.at(60), zones: ["dock"], open: [],
            transitions: [
                Self.move("cart-7", true, 10), Self.move("cart-7", true, 10, visit: false),
                Self.move("cart-7", false, 20, visit: false), Self.move("cart-7", true, 21, visit: false),
                Self.move("pallet-1", true, 25, visit: false), Self.move("cart-7", false, 30),
                Self.move("cart-7", false, 30, visit: false),
            ])
        let dock = try #require(stats.first)
        #expect(dock.visits == 1 && dock.dwells == [1200] && abs(dock.assetMinutes - 20) < 1e-9)
        #expect(dock.assets == 1, "the pallet is inside by the edge rule but on no visit")
        #expect(dock.occupancyMax == 2 && abs(dock.occupancySeconds - (19 + 35) * 60) < 1e-6)
        #expect(open == [ZoneHours.OpenVisit(zone: "dock", asset: "pallet-1", entered: Self.at(25))])
    }

    /// Hour by hour, a visit open across the boundary is one visit: its enter in the first
    /// hour, its whole dwell in the second; the asset-minutes add up over the two.
    @Test func aVisitAcrossHoursIsCountedOnceAndWhole() throws {
        let first = ZoneHours.compute(
            hour: Self.hour, until: Self.at(60), zones: ["dock"], open: [],
            transitions: [Self.move("pallet-1", true, 40)])
        let second = ZoneHours.compute(
            hour: Self.at(60), until: Self.at(120), zones: ["dock"], open: first.open,
            transitions: [Self.move("pallet-1", false, 70)])
        #expect(first.stats[0].visits == 1 && second.stats[0].visits == 0)
        #expect(first.stats[0].dwells.isEmpty && second.stats[0].dwells == [1800])
        #expect(abs(first.stats[0].assetMinutes + second.stats[0].assetMinutes - 30) < 1e-9)
        #expect(second.stats[0].assets == 1 && second.open.isEmpty)
    }

    /// The hour under way: its mean is over the time so far.
    @Test func theHourUnderWayIsAveragedOverTheTimeSoFar() {
        let (stats, _) = ZoneHours.compute(
            hour: Self.hour, until: Self.at(20), zones: ["dock"], open: [],
            transitions: Self.withLive([Self.move("cart-7", true, 10)]))
        #expect(abs(stats[0].occupancyMean - 0.5) < 1e-9 && abs(stats[0].assetMinutes - 10) < 1e-9)
    }

    /// What cannot change a zone's count does not: a second enter of an asset inside, an exit
    /// of one outside, a transition stamped before the last (a clock stepped back) taken at
    /// the last one's time, and one before the hour taken at its start.
    @Test func repeatsAndStepsBackChangeNothingTheyCannot() {
        let (stats, _) = ZoneHours.compute(
            hour: Self.hour, until: Self.at(60), zones: ["dock"], open: [],
            transitions: [
                Self.move("cart-7", true, -5), Self.move("cart-7", true, 10), Self.move("cart-8", false, 12),
                Self.move("cart-7", false, 30), Self.move("cart-9", true, 40), Self.move("cart-9", false, 40.5),
                Self.move("cart-10", true, 45), Self.move("cart-10", false, 44),
            ])
        #expect(stats[0].visits == 3, "cart-7 once, cart-9 once, cart-10 once")
        // cart-7 from the hour's start to 10:30; cart-9 half a minute; cart-10 left as it came.
        #expect(abs(stats[0].assetMinutes - 30.5) < 1e-9)
        #expect(stats[0].dwells == [0, 30, 1800])
    }

    /// Nearest-rank percentiles: values that occurred.
    @Test func percentilesAreValuesThatOccurred() {
        let values = (1...10).map(Double.init)
        #expect(ZoneBucketStats.percentile(values, 0.5) == 5 && ZoneBucketStats.percentile(values, 0.9) == 9)
        #expect(ZoneBucketStats.percentile([7], 0.9) == 7 && ZoneBucketStats.percentile([], 0.5) == nil)
        #expect(
            ZoneBucketStats.hour(of: Self.at(59.9)) == Self.hour && ZoneBucketStats.hour(of: Self.at(60)) == Self.at(60)
        )
    }
}

/// The tracker keeps each change of membership of every zone, alarm or none, for the
/// analytics — only when asked (a replay or a benchmark keeps nothing).
struct ZoneTransitionRecordTests {
    @Test func everyZonesChangesAreKeptWhenAskedWithOrWithoutAnAlarm() {
        for records in [true, false] {
            var tracker = AssetTracker(
                site: AssetTrackerTests.site(alarms: []), calibrations: AssetTrackerTests.calibrations,
                lostAfter: .seconds(5), start: AssetTrackerTests.t0)
            tracker.recordsTransitions = records
            var events: [Event] = []
            // Inside 20 s, then out: longer than the default `confirm` each way (a zone without an
            // alarm follows it).
            for s in 1...40 {
                events += AssetTrackerTests.step(
                    &tracker, at: s <= 20 ? Point(x: 2, y: 5) : Point(x: 8, y: 5),
                    time: AssetTrackerTests.t0 + .seconds(Int64(s)))
            }
            #expect(!events.contains { if case .zone = $0.payload { true } else { false } }, "no alarm, no alert")
            let kept = (tracker.transitions + tracker.held).filter { !$0.visit }
                .map { "\($0.asset) \($0.entered ? "enter" : "exit") \($0.zone)" }
            #expect(kept == (records ? ["cart enter left", "cart exit left"] : []), "\(kept)")
        }
    }
}

/// SPEC §10: the analytics' transitions reach the store in the order of their times, though a
/// visit's enter is decided up to `settleTime` after it: each is held that long.
struct SettledTransitionTests {
    @Test func aVisitsEnterDecidedLateIsStoredBeforeLaterLiveChanges() {
        var tracker = AssetTracker(
            site: AssetTrackerTests.site(alarms: []), calibrations: AssetTrackerTests.calibrations,
            lostAfter: .seconds(600), start: AssetTrackerTests.t0)
        tracker.recordsTransitions = true
        var released: [ZoneTransition] = []
        let settle = tracker.visitRules.settleTime
        for s in 1...240 {
            let t = AssetTrackerTests.t0 + .seconds(Int64(s))
            _ = AssetTrackerTests.step(&tracker, at: s <= 120 ? Point(x: 2, y: 5) : Point(x: 8, y: 5), time: t)
            #expect(tracker.transitions.allSatisfy { $0.time <= t - settle }, "nothing let through unsettled")
            #expect(tracker.held.allSatisfy { $0.time > t - settle }, "nothing settled kept back")
            released += tracker.transitions
            tracker.transitions = []
        }
        let kinds = released.map { "\($0.visit ? "visit" : "live") \($0.entered ? "enter" : "exit")" }
        #expect(kinds == ["live enter", "visit enter", "live exit", "visit exit"], "\(kinds)")
        #expect(zip(released, released.dropFirst()).allSatisfy { $0.time <= $1.time }, "in the order of their times")
        var stopping = tracker
        stopping.releaseSettled(upTo: Timestamp(nanoseconds: .max))
        #expect(stopping.held.isEmpty)
    }
}

/// The heat map: asset-seconds per 1 m cell at each positioning tick, only with the analytics on.
struct HeatMapTests {
    @Test func aCartsSecondsAreWhereItWasPlaced() {
        var tracker = AssetTracker(
            site: AssetTrackerTests.site(alarms: []), calibrations: AssetTrackerTests.calibrations,
            lostAfter: .seconds(5), start: AssetTrackerTests.t0)
        tracker.recordsTransitions = true
        for s in 1...20 {
            _ = AssetTrackerTests.step(
                &tracker, at: s <= 5 ? Point(x: 2.5, y: 5.5) : Point(x: 8.5, y: 5.5),
                time: AssetTrackerTests.t0 + .seconds(Int64(s)))
        }
        let west = tracker.heat.seconds[HeatMap.Cell(level: 0, x: 2, y: 5)] ?? 0
        let east = tracker.heat.seconds[HeatMap.Cell(level: 0, x: 8, y: 5)] ?? 0
        let all = tracker.heat.seconds.values.reduce(0, +)
        // The filtered readings take a few seconds to follow the move: the cells between get some.
        #expect(west >= 3 && east >= 8, "\(tracker.heat.seconds)")
        #expect(all <= 20 + 1e-9, "one tick's seconds per tick at most")
        var off = tracker
        off.recordsTransitions = false
        off.heat = HeatMap()
        _ = AssetTrackerTests.step(&off, at: Point(x: 8.5, y: 5.5), time: AssetTrackerTests.t0 + .seconds(21))
        #expect(off.heat.isEmpty)
        #expect(HeatMap.Cell(Point(x: -0.5, y: 3.99), level: 1) == HeatMap.Cell(level: 1, x: -1, y: 3))
    }
}
