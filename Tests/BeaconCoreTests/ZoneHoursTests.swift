import Testing

@testable import BeaconCore

/// SPEC §8: a zone's hour — visits, distinct assets, time-weighted occupancy, asset-minutes and
/// the dwell of the visits that ended — from the visits open at its start and its transitions.
struct ZoneHoursTests {
    static let hour = Timestamp.seconds(1_763_805_600)  // 10:00 UTC

    static func at(_ minutes: Double) -> Timestamp { hour + TimeSpan(nanoseconds: Int64(minutes * 60e9)) }

    static func move(_ asset: String, _ entered: Bool, _ minutes: Double, zone: String = "dock") -> ZoneTransition {
        ZoneTransition(zone: zone, asset: asset, entered: entered, time: at(minutes))
    }

    /// A pallet in the dock since 9:30 leaves at 10:15; a cart comes at 10:10 and goes at
    /// 10:40; a second pallet comes at 10:50 and is still there at 11:00.
    @Test func anHourOfTheDockIsCountedFromItsVisits() throws {
        let (stats, open) = ZoneHours.compute(
            hour: Self.hour, until: Self.at(60), zones: ["dock", "till"],
            open: [ZoneHours.OpenVisit(zone: "dock", asset: "pallet-1", entered: Self.at(-30))],
            transitions: [
                Self.move("cart-7", true, 10), Self.move("pallet-1", false, 15), Self.move("cart-7", false, 40),
                Self.move("pallet-2", true, 50),
            ])
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
        #expect(open == [ZoneHours.OpenVisit(zone: "dock", asset: "pallet-2", entered: Self.at(50))])
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
            transitions: [Self.move("cart-7", true, 10)])
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
        #expect(ZoneHourStats.percentile(values, 0.5) == 5 && ZoneHourStats.percentile(values, 0.9) == 9)
        #expect(ZoneHourStats.percentile([7], 0.9) == 7 && ZoneHourStats.percentile([], 0.5) == nil)
        #expect(
            ZoneHourStats.hour(of: Self.at(59.9)) == Self.hour && ZoneHourStats.hour(of: Self.at(60)) == Self.at(60))
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
            for s in 1...10 {
                events += AssetTrackerTests.step(
                    &tracker, at: s <= 5 ? Point(x: 2, y: 5) : Point(x: 8, y: 5),
                    time: AssetTrackerTests.t0 + .seconds(Int64(s)))
            }
            #expect(!events.contains { if case .zone = $0.payload { true } else { false } }, "no alarm, no alert")
            let kept = tracker.transitions.map { "\($0.asset) \($0.entered ? "enter" : "exit") \($0.zone)" }
            #expect(kept == (records ? ["cart enter left", "cart exit left"] : []), "\(kept)")
        }
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
