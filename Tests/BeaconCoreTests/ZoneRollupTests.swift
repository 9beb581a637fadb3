import Testing

@testable import BeaconCore

/// SPEC §8: where counting stands (`ZoneRollup`) — each stored transition counted in exactly
/// one hour and one day, whether the hours roll as they close or all at once after a stop,
/// whatever the clock did, and the counting made to agree with the engine's zones at a start.
struct ZoneRollupTests {
    static let midnight = Timestamp.seconds(1_763_769_600)  // 2025-11-22T00:00:00Z

    static func at(_ hours: Double) -> Timestamp { midnight + TimeSpan(nanoseconds: Int64(hours * 3600e9)) }

    static func stored(_ seq: Int64, _ asset: String, _ entered: Bool, _ hours: Double, zone: String = "dock")
        -> ZoneRollup.Stored
    {
        ZoneRollup.Stored(
            seq: seq, ZoneTransition(zone: zone, asset: asset, entered: entered, time: at(hours), visit: true))
    }

    /// Pallet 1 from 22:30 (yesterday, open at the start) to 01:15; cart 7 01:10–02:40, and
    /// again from 23:50 until after midnight.
    static let day: [ZoneRollup.Stored] = [
        stored(1, "cart-7", true, 1 + 10.0 / 60), stored(2, "pallet-1", false, 1.25),
        stored(3, "cart-7", false, 2 + 40.0 / 60),
        stored(4, "cart-7", true, 23 + 50.0 / 60), stored(5, "cart-7", false, 24.5),
    ]

    static func start() -> ZoneRollup {
        ZoneRollup(
            startingAt: at(0.2),
            open: [ZoneHours.OpenVisit(zone: "dock", asset: "pallet-1", entered: at(-1.5), visit: true)])
    }

    @Test func hoursRolledAsTheyCloseOrAllAtOnceAreTheSame() throws {
        var byHour = Self.start()
        var hours: [ZoneBucketStats] = []
        var days: [ZoneBucketStats] = []
        for h in stride(from: 0.5, through: 25.5, by: 0.5) {
            // What a restart would read: the transitions after the day under way began.
            let rolled = byHour.roll(Self.day.filter { $0.seq > byHour.dayFromSeq }, now: Self.at(h))
            hours += rolled.hours
            days += rolled.days
        }
        var atOnce = Self.start()
        let rolled = atOnce.roll(Self.day, now: Self.at(25.5))
        #expect(rolled.hours == hours && rolled.days == days)
        #expect(atOnce == byHour)

        // 00:00–02:00 the pallet, 01:00–03:00 the cart, 23:00–00:00 and 00:00–01:00 the cart.
        #expect(hours.map { ZoneBucketStats.hour(of: $0.hour) } == [0, 1, 2, 23, 24].map { Self.at($0) })
        #expect(hours.map(\.visits) == [0, 1, 0, 1, 0])
        #expect(hours[1].dwells == [9900], "the pallet's whole visit, 2 h 45 min, ends at 01:15")
        #expect(hours[2].dwells == [5400] && hours[4].dwells == [2400])
        let day = try #require(days.first)
        #expect(days.count == 1 && day.hour == Self.at(0))
        #expect(day.visits == 2 && day.assets == 2 && day.dwells == [5400, 9900])
        #expect(abs(day.assetSeconds - (4500 + 5400 + 600)) < 1e-6)
        #expect(atOnce.open.isEmpty && atOnce.nextHour == Self.at(25))
        #expect(atOnce.dayOpen.map(\.asset) == ["cart-7"] && atOnce.day == Self.at(24), "in at midnight")
    }

    /// The clock steps back an hour after 02:00 was rolled: the cart's exit stamped 01:30 is
    /// counted once, in the hour under way, at its start — not lost, not in a closed hour.
    @Test func aTransitionStampedInAClosedHourIsCountedOnceInTheHourUnderWay() throws {
        var mark = ZoneRollup(startingAt: Self.at(0), open: [])
        let first = [Self.stored(1, "cart-7", true, 1.5)]
        _ = mark.roll(first, now: Self.at(2.1))
        let stepped = first + [Self.stored(2, "cart-7", false, 1.75)]
        let rolled = mark.roll(stepped, now: Self.at(3.1))
        #expect(rolled.hours.count == 1 && rolled.hours[0].hour == Self.at(2))
        #expect(rolled.hours[0].dwells == [1800], "its exit held at the hour's start, 02:00")
        #expect(rolled.hours[0].visits == 0 && mark.throughSeq == 2)
    }

    /// An answer adds the hour under way (up to now) without moving the mark.
    @Test func theHourUnderWayIsAnsweredWithoutRollingIt() throws {
        let mark = ZoneRollup(startingAt: Self.at(1), open: [])
        let stored = [Self.stored(1, "cart-7", true, 1.25)]
        var underWay = ZoneRollup.Rolled()
        let (hours, days) = mark.underWayHours(stored, now: Self.at(1.5))
        (underWay.hours, underWay.days) = (hours, ZoneRollup.DayCounter(days).counting(stored))
        #expect(underWay.hours.count == 1 && underWay.hours[0].visits == 1)
        #expect(abs(underWay.hours[0].assetSeconds - 900) < 1e-9, "on its visit 15 of the 30 minutes so far")
        #expect(underWay.days.count == 1 && underWay.days[0].visits == 1)
        #expect(mark == ZoneRollup(startingAt: Self.at(1), open: []))
    }

    /// At a start: a visit the counting has open but the engine does not (its zone removed
    /// while stopped) ends now; a membership never counted begins at its enter.
    @Test func aStartMakesTheCountingAgreeWithTheEnginesZones() throws {
        let mark = ZoneRollup(
            startingAt: Self.at(1),
            open: [ZoneHours.OpenVisit(zone: "old", asset: "a", entered: Self.at(0.5), visit: true)])
        let open = mark.openVisits(after: [Self.stored(1, "b", true, 1.2)])
        #expect(Set(open.map(\.asset)) == ["a", "b"])
        let fixes = ZoneRollup.reconcile(
            open: open,
            inside: [
                ZoneHours.OpenVisit(zone: "dock", asset: "b", entered: Self.at(1.2), visit: true),
                ZoneHours.OpenVisit(zone: "dock", asset: "c", entered: Self.at(1.3), visit: true),
            ], at: Self.at(2))
        #expect(
            fixes == [
                ZoneTransition(zone: "old", asset: "a", entered: false, time: Self.at(2), visit: true),
                ZoneTransition(zone: "dock", asset: "c", entered: true, time: Self.at(1.3), visit: true),
            ])
        #expect(ZoneRollup.reconcile(open: open, inside: open, at: Self.at(2)).isEmpty)
    }

    /// A zone's figures are the same counted alone (an answer about it) or among every
    /// zone's (the roll): the clock stepped back holds a transition at its own zone's last
    /// time, not at another zone's.
    @Test func aZoneCountedAloneOrAmongEveryZoneGivesTheSame() throws {
        let all = [
            Self.stored(1, "cart-7", true, 0.8, zone: "aisle"),
            Self.stored(2, "pallet-1", true, 0.25), Self.stored(3, "pallet-1", false, 0.5),
        ]
        let together = ZoneHours.compute(
            hour: Self.at(0), until: Self.at(1), zones: [], open: [], transitions: all.map(\.transition))
        let alone = ZoneHours.compute(
            hour: Self.at(0), until: Self.at(1), zones: [], open: [],
            transitions: all.filter { $0.transition.zone == "dock" }.map(\.transition))
        #expect(together.stats.map(\.zone) == ["aisle", "dock"])
        #expect(together.stats[1] == alone.stats[0])
        #expect(alone.stats[0].dwells == [900] && abs(alone.stats[0].assetSeconds - 900) < 1e-9)
    }

    /// Days counted from the transitions one at a time (`rollHours`, then a `DayCounter`, as
    /// the state store does at midnight) are the days `roll` gives from them all at once; a
    /// transition outside a day's seqs is not counted in it.
    @Test func daysCountedOneTransitionAtATimeAreTheDaysRolledAtOnce() throws {
        var atOnce = Self.start()
        let rolled = atOnce.roll(Self.day, now: Self.at(49))
        var byHours = Self.start()
        let (hours, days) = byHours.rollHours(Array(Self.day.drop { $0.seq <= byHours.throughSeq }), now: Self.at(49))
        #expect(days.map(\.start) == [Self.at(0), Self.at(24)])
        #expect(days.map(\.throughSeq) == [4, 5] && days[1].afterSeq == 4)
        var counter = ZoneRollup.DayCounter(days)
        #expect(counter.seqs! == (0, 5))
        for s in Self.day + [Self.stored(6, "cart-7", true, 49.5)] { counter.take(s) }
        #expect(hours == rolled.hours && counter.finish() == rolled.days && byHours == atOnce)
        #expect(rolled.days.map(\.visits) == [2, 0] && rolled.days[1].dwells == [2400])
    }

    @Test func dwellBinsGiveThePercentileWithinOnePercentAndKeepTheMax() throws {
        let dwells = (1...500).map { Double($0 * 7) }
        let bins = DwellBins(dwells)
        let exact = ZoneBucketStats.percentile(dwells, 0.9)!
        #expect(abs(bins.percentile(0.9)! - exact) / exact < 0.01)
        #expect(bins.max == 3500 && bins.total == 500)
        #expect(DwellBins(text: bins.text) == bins)
        var merged = DwellBins(Array(dwells[..<250]))
        merged.merge(DwellBins(Array(dwells[250...])))
        #expect(merged == bins)
        // Out of order, a pair it cannot read, one cut short: read as far as it goes.
        let read = DwellBins(text: "5:2 3:1 x:4 7: max=9.5")
        #expect(read.pairs.map { [$0.bin, $0.count] } == [[3, 1], [5, 2]] && read.total == 3 && read.max == 9.5)
    }

    /// Issue 51, item 9: a damaged roll-up row trapped every report that spanned it — no max
    /// (`max!`), counts that overflow when added — and an unsorted one was merged pair by pair.
    @Test func aDamagedRowIsReadAsFarAsItGoesAndTrapsNothing() {
        let noMax = DwellBins(text: "5:3 2:1")
        #expect(noMax.max == nil && noMax.total == 4)
        #expect(noMax.percentile(0.5) == DwellBins.middleValue(of: 5))
        #expect(DwellBins(text: "4:1 max=nan").max == nil && DwellBins(text: "4:1 max=-3").max == nil)
        var huge = DwellBins(text: "1:999999999 1:999999999 1:999999999")
        #expect(huge.pairs.map(\.count) == [Int32.max])
        huge.merge(DwellBins(text: "1:999999999 max=1.5"))
        #expect(huge.pairs.map(\.count) == [Int32.max] && huge.percentile(0.9) == 1.5)
        // Twenty thousand pairs in reverse order, each bin twice: added up, sorted.
        let text = (0..<20_000).reversed().map { "\($0 % 10_000 + 1):1" }.joined(separator: " ")
        let long = DwellBins(text: text)
        #expect(long.pairs.count == 10_000 && long.pairs.allSatisfy { $0.count == 2 } && long.total == 20_000)
        #expect(zip(long.pairs, long.pairs.dropFirst()).allSatisfy { $0.bin < $1.bin })
    }
}
