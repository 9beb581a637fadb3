import Foundation
import Simulation
import Synchronization
import TestSupport
import Testing

@testable import BeaconCore
@testable import Storage

/// The zone roll-ups in a real state file: the analytics' tick (`rollZones`) counts a day
/// from its stored transitions as it reads them, and stores what counting all of them at once
/// gives; an answer about one zone counts that zone's day the same way.
@Suite struct ZoneRollupStoreTests {
    static let midnight = Timestamp.seconds(1_763_769_600)  // 2025-11-22T00:00:00Z

    /// Two days of three zones: 12 assets moving every few minutes, and the clock stepped back
    /// 20 minutes at 05:00 of the first day.
    static func transitions() -> [ZoneTransition] {
        var out: [ZoneTransition] = []
        var inside: [String: String] = [:]
        var random = SeededRandom(seed: 43)
        var t = midnight + .minutes(3)
        var stepped = false
        while t < midnight + .hours(48) {
            let asset = "asset-\(Int(random.uniform() * 12))"
            if let zone = inside.removeValue(forKey: asset) {
                out.append(ZoneTransition(zone: zone, asset: asset, entered: false, time: t, visit: true))
            } else {
                let zone = ["dock", "aisle-1", "aisle-2"][Int(random.uniform() * 3)]
                inside[asset] = zone
                out.append(ZoneTransition(zone: zone, asset: asset, entered: true, time: t, visit: true))
            }
            let next = t + .seconds(Int64(30 + random.uniform() * 240))
            t = !stepped && next >= midnight + .hours(5) ? next - .minutes(20) : next
            stepped = stepped || next >= midnight + .hours(5)
        }
        return out
    }

    @Test func theMidnightRollStoresWhatCountingEveryTransitionAtOnceGives() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        try store.saveRollup(ZoneRollup(startingAt: Self.midnight, open: []), .init(), keepAfter: .seconds(0))
        let all = Self.transitions()
        var committed = 0
        for minute in stride(from: Int64(0), through: 49 * 60, by: 10) {
            let now = Self.midnight + .minutes(minute)
            let due = all[committed...].prefix { $0.time < now }
            try store.commit([], transitions: Array(due))
            committed += due.count
            #expect(try store.rollZones(at: now, keepAfter: .seconds(0)) != nil)
        }
        // The same transitions counted from one array, stored in a second file.
        var expected = ZoneRollup(startingAt: Self.midnight, open: [])
        let stored = all.enumerated().map { ZoneRollup.Stored(seq: Int64($0.offset + 1), $0.element) }
        let rolled = expected.roll(stored, now: Self.midnight + .hours(49))
        #expect(rolled.days.count == 6 && rolled.days.allSatisfy { $0.visits > 10 })
        let other = try StateStore(directory: try Executables.temporaryDirectory().path)
        try other.saveRollup(expected, rolled, keepAfter: .seconds(0))
        for span in [ZoneRollup.hour, ZoneRollup.dayLength] {
            let range = (Self.midnight, Self.midnight + .hours(49))
            #expect(
                try store.zoneFigures(span: span, zone: nil, from: range.0, to: range.1)
                    == other.zoneFigures(span: span, zone: nil, from: range.0, to: range.1))
        }
        #expect(try store.zoneRollupMark() == other.zoneRollupMark(), "the same mark, open visits and all")
        // Both days' transitions are forgotten once counted.
        #expect(try store.zoneTransitions(after: 0).allSatisfy { $0.transition.time >= Self.midnight + .hours(48) })
    }

    /// An answer about the day under way counts that zone's stored transitions as it reads
    /// them, and gives what the roll will store for it.
    @Test func aZonesDayUnderWayIsWhatItsRollWillStore() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        try store.saveRollup(ZoneRollup(startingAt: Self.midnight, open: []), .init(), keepAfter: .seconds(0))
        let day = Self.transitions().prefix { $0.time < Self.midnight + .hours(23) }
        try store.commit([], transitions: Array(day))
        let end = Self.midnight + .hours(24)
        let answer = try store.zoneBuckets(
            zone: "aisle-2", span: ZoneRollup.dayLength, from: Self.midnight, to: end, now: end)
        #expect(try store.rollZones(at: end, keepAfter: .seconds(0)) == true)
        let stored = try store.zoneFigures(span: ZoneRollup.dayLength, zone: "aisle-2", from: Self.midnight, to: end)
        #expect(answer.count == 1 && answer == stored && stored[0].visits > 10)
    }

    /// Counted transitions are forgotten a chunk per transaction, those after the mark kept.
    @Test func countedTransitionsAreForgottenInChunksAndNoMore() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        let all = Self.transitions().prefix(250)
        try store.commit([], transitions: Array(all))
        try store.forgetTransitions(through: 205, chunk: 50)
        let left = try store.zoneTransitions(after: 0)
        #expect(left.map(\.seq) == Array(206...250) && left.map(\.transition) == Array(all.suffix(45)))
        try store.forgetTransitions(through: 300, chunk: 45)
        #expect(try store.zoneTransitions(after: 0).isEmpty && store.lastZoneTransitionSeq() == 0)
    }

    /// Issue 51, item 7: a clock a year ahead for one tick wrote 8,760 hours in one transaction,
    /// and then, back, rolled and forgot nothing until it caught up while transitions piled up.
    /// Now a roll takes at most `catchUpHours`, and a mark ahead of the clock moves back to it.
    @Test func aClockAYearAheadRollsTwoDaysAndTheMarkComesBackWithTheClock() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        try store.saveRollup(ZoneRollup(startingAt: Self.midnight, open: []), .init(), keepAfter: .seconds(0))
        let day = Array(Self.transitions().prefix { $0.time < Self.midnight + .hours(2) })
        try store.commit([], transitions: day)
        let yearAhead = Self.midnight + .hours(24 * 365)
        #expect(try store.rollZones(at: yearAhead, keepAfter: .seconds(0)) == true)
        let hoursRows = try store.zoneFigures(span: ZoneRollup.hour, zone: nil, from: .seconds(0), to: yearAhead)
        let lastRow = try #require(hoursRows.map(\.start).max())
        #expect(lastRow < Self.midnight + .hours(Int64(ZoneRollup.catchUpHours)), "rolled up to \(lastRow)")
        #expect(try store.zoneRollupMark()?.nextHour == Self.midnight + .hours(Int64(ZoneRollup.catchUpHours)))
        // The clock back (2 h 30 past midnight): the mark comes back to its hour.
        let back = Self.midnight + .minutes(150)
        #expect(try store.rollZones(at: back, keepAfter: .seconds(0)) == true)
        let mark = try #require(try store.zoneRollupMark())
        #expect(mark.nextHour == Self.midnight + .hours(2) && mark.day == Self.midnight)
        // And rolls on with it: what is made now is counted in its hour, and counted
        // transitions are forgotten.
        let later = [
            ZoneTransition(zone: "dock", asset: "late", entered: true, time: back + .minutes(1), visit: true),
            ZoneTransition(zone: "dock", asset: "late", entered: false, time: back + .minutes(40), visit: true),
        ]
        try store.commit([], transitions: later)
        #expect(try store.rollZones(at: Self.midnight + .hours(4), keepAfter: .seconds(0)) == true)
        let hour = try store.zoneFigures(
            span: ZoneRollup.hour, zone: "dock", from: Self.midnight + .hours(2), to: Self.midnight + .hours(4))
        #expect(hour.reduce(0) { $0 + $1.visits } >= 1, "\(hour)")
        // Counted ones are forgotten; the day under way keeps its own until it closes.
        #expect(try store.zoneTransitions(after: 0).map(\.transition) == later)
    }

    /// SPEC §10: a visit's end is stored when `zone.visit` is told, up to `settleTime` after
    /// it. The hour it ended in is rolled that long after its end, with it; rolled at its end
    /// (no settle, as before), the hour closed without it and the dwell went to the next.
    @Test func anHourRollsOnlyOnceItsVisitsHaveSettled() throws {
        let settle = VisitRules().settleTime
        let hour = Self.midnight + .hours(5)
        var dwellHours: [TimeSpan: [Timestamp]] = [:]
        for wait in [settle, TimeSpan.seconds(0)] {
            let store = try StateStore(directory: try Executables.temporaryDirectory().path)
            try store.saveRollup(ZoneRollup(startingAt: hour, open: []), .init(), keepAfter: .seconds(0))
            let enter = ZoneTransition(
                zone: "dock", asset: "cart", entered: true, time: hour + .minutes(50), visit: true)
            try store.commit([], transitions: [enter])
            // 10 s after the hour: its visit's end (at 59:50) is not told yet.
            let rolledEarly = try store.rollZones(
                at: hour + .minutes(60) + .seconds(10), settle: wait, keepAfter: .seconds(0))
            #expect(rolledEarly == (wait == .seconds(0)))
            let exit = ZoneTransition(
                zone: "dock", asset: "cart", entered: false, time: hour + .minutes(60) - .seconds(10), visit: true)
            try store.commit([], transitions: [exit])
            #expect(
                try store.rollZones(at: hour + .minutes(61), settle: wait, keepAfter: .seconds(0))
                    == (wait != .seconds(0)))
            _ = try store.rollZones(at: hour + .minutes(121), settle: wait, keepAfter: .seconds(0))
            let rows = try store.zoneFigures(span: ZoneRollup.hour, zone: "dock", from: hour, to: hour + .hours(2))
            dwellHours[wait] = rows.filter { $0.dwellCount > 0 }.map(\.start)
            if wait == settle {
                #expect(rows.first.map { $0.start == hour && $0.visits == 1 && $0.dwellMax == 590 } == true, "\(rows)")
            }
        }
        #expect(dwellHours[settle] == [hour], "the dwell in the hour the visit ended")
        #expect(dwellHours[.seconds(0)] == [hour + .hours(1)], "rolled unsettled, it went to the next hour")
    }

    /// Issue 51, item 10: an answer read the figures, the mark and the transitions in three
    /// transactions, so a roll between them dropped an hour from it. Answers read while the
    /// analytics roll an hour at a time must each count every visit of the two days.
    @Test func anAnswerReadWhileHoursRollCountsEveryVisit() throws {
        let all = Self.transitions()
        let end = Self.midnight + .hours(48)
        for _ in 0..<3 {
            let store = try StateStore(directory: try Executables.temporaryDirectory().path)
            try store.saveRollup(ZoneRollup(startingAt: Self.midnight, open: []), .init(), keepAfter: .seconds(0))
            try store.commit([], transitions: all)
            func visits() throws -> Int {
                try store.zoneBuckets(zone: nil, span: ZoneRollup.hour, from: Self.midnight, to: end, now: end)
                    .reduce(0) { $0 + $1.visits }
            }
            let expected = try visits()
            #expect(expected > 100)
            let rolling = Atomic<Bool>(true)
            let roller = Thread {
                while (try? store.rollZones(at: end, keepAfter: .seconds(0), atMost: 1)) == true {}
                rolling.store(false, ordering: .releasing)
            }
            roller.start()
            var answers = 0
            while rolling.load(ordering: .acquiring) {
                let got = try visits()
                answers += 1
                #expect(got == expected, "an answer read during a roll counted \(got) of \(expected) visits")
                if got != expected { break }
            }
            #expect(answers > 0)
        }
    }
}
