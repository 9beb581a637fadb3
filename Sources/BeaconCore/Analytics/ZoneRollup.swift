/// Where the zones' hourly and daily roll-ups (SPEC §8) stand: the first hour not yet rolled,
/// the last stored transition counted in the rolled hours, and the visits open at that hour's
/// start; the same for the day under way. With the transitions stored after it, this is all
/// a restart needs to go on counting: each transition is counted in exactly one hour and one
/// day, whenever the hours are rolled (as they close, or all at once after a week switched
/// off), whatever the clock did meanwhile.
public struct ZoneRollup: Sendable, Equatable {
    /// A change of membership as stored: its place in the order the engine made them.
    public struct Stored: Sendable, Equatable {
        public var seq: Int64
        public var transition: ZoneTransition

        public init(seq: Int64, _ transition: ZoneTransition) {
            self.seq = seq
            self.transition = transition
        }
    }

    /// The first hour not yet rolled.
    public var nextHour: Timestamp
    /// The last transition counted in a rolled hour.
    public var throughSeq: Int64
    /// The visits under way at `nextHour`.
    public var open: [ZoneHours.OpenVisit]
    /// The day under way (UTC), the last transition before it, and the visits open at it.
    public var day: Timestamp
    public var dayFromSeq: Int64
    public var dayOpen: [ZoneHours.OpenVisit]

    public static let hour = TimeSpan.hours(1)
    public static let dayLength = TimeSpan.hours(24)

    /// Counting starts at `now`'s hour with the visits under way (a first start, or a state
    /// file from before the analytics): they are counted from their enter, whole.
    public init(startingAt now: Timestamp, open: [ZoneHours.OpenVisit], throughSeq: Int64 = 0) {
        nextHour = ZoneBucketStats.hour(of: now)
        self.throughSeq = throughSeq
        self.open = open
        day = Self.day(of: nextHour)
        dayFromSeq = throughSeq
        dayOpen = open
    }

    public init(
        nextHour: Timestamp, throughSeq: Int64, open: [ZoneHours.OpenVisit], day: Timestamp, dayFromSeq: Int64,
        dayOpen: [ZoneHours.OpenVisit]
    ) {
        (self.nextHour, self.throughSeq, self.open) = (nextHour, throughSeq, open)
        (self.day, self.dayFromSeq, self.dayOpen) = (day, dayFromSeq, dayOpen)
    }

    /// The UTC day that `t` falls in.
    public static func day(of t: Timestamp) -> Timestamp {
        let ns = dayLength.nanoseconds
        let q = t.nanoseconds / ns
        return Timestamp(nanoseconds: (t.nanoseconds % ns < 0 ? q - 1 : q) * ns)
    }

    /// What rolling made: the hours and days that closed (only those where something was
    /// inside or happened), to be stored with the mark that moved on.
    public struct Rolled: Sendable, Equatable {
        public var hours: [ZoneBucketStats] = []
        public var days: [ZoneBucketStats] = []
        public var isEmpty: Bool { hours.isEmpty && days.isEmpty }
        public init() {}
    }

    /// Rolls every hour that ended by `now`, and the days they close, from `stored` (the
    /// transitions after `dayFromSeq`, in order, held at once). Not used by the daemon: the
    /// reference the tests check the state store's streamed roll against (`@testable`). An
    /// hour takes, in order, the transitions not yet counted up to the first made at or after
    /// its end; one made earlier than the hour (a clock stepped back) is counted in it, at its
    /// start.
    mutating func roll(_ stored: [Stored], now: Timestamp) -> Rolled {
        let (hours, days) = rollHours(stored, now: now)
        var rolled = Rolled()
        rolled.hours = hours
        rolled.days = DayCounter(days).counting(stored)
        return rolled
    }

    /// At most this many hours are rolled at once (`rollHours`' `atMost`, as the daemon rolls):
    /// a week switched off is caught up in a few ticks, and a clock stepped a year ahead
    /// writes two days of rows in one transaction, not 8,760 hours of them (issue 51, item 7).
    public static let catchUpHours = 48

    /// `roll` without the days: the hours that ended by `now` (at most `atMost` of them), from
    /// `stored` (the transitions after `throughSeq` suffice), and the days they closed, left
    /// for a `DayCounter` to count from the stored transitions as they are read.
    public mutating func rollHours(_ stored: [Stored], now: Timestamp, atMost: Int = .max)
        -> (hours: [ZoneBucketStats], days: [Day])
    {
        var hours: [ZoneBucketStats] = []
        var days: [Day] = []
        var next = stored.firstIndex { $0.seq > throughSeq } ?? stored.endIndex
        var rolled = 0
        while now >= nextHour + Self.hour, rolled < atMost {
            rolled += 1
            let end = nextHour + Self.hour
            var taken: [ZoneTransition] = []
            while next < stored.endIndex, stored[next].transition.time < end {
                taken.append(stored[next].transition)
                throughSeq = stored[next].seq
                next += 1
            }
            let hour = ZoneHours.compute(hour: nextHour, until: end, zones: [], open: open, transitions: taken)
            hours += hour.stats.filter { !$0.isEmpty }
            open = hour.open
            nextHour = end
            if Self.day(of: end) == end {
                days.append(Day(start: day, end: end, afterSeq: dayFromSeq, throughSeq: throughSeq, open: dayOpen))
                (day, dayFromSeq, dayOpen) = (end, throughSeq, open)
            }
        }
        return (hours, days)
    }

    /// The clock went back past the mark (set back for good, or back from a step ahead): the
    /// mark moves to `now`'s hour and day, so that the hours roll again from here instead of
    /// waiting for the clock to catch up while transitions pile up. Every transition is still
    /// counted once: those after `throughSeq` in the hours from here. False when the mark is
    /// not ahead of `now`'s hour.
    public mutating func reanchor(at now: Timestamp) -> Bool {
        let hour = ZoneBucketStats.hour(of: now)
        guard nextHour > hour else { return false }
        nextHour = hour
        (day, dayFromSeq, dayOpen) = (Self.day(of: hour), throughSeq, open)
        return true
    }

    /// The hours not rolled yet, up to `now` (the last one so far), from the transitions after
    /// `throughSeq`, and the days to count (with a `DayCounter`): those that ended by `now` and
    /// the one under way, up to `now`. What an answer adds to the stored roll-ups.
    public func underWayHours(_ stored: [Stored], now: Timestamp) -> (hours: [ZoneBucketStats], days: [Day]) {
        var copy = self
        var (hours, days) = copy.rollHours(stored, now: now)
        if now > copy.nextHour {
            let rest = stored.filter { $0.seq > copy.throughSeq }.map(\.transition)
            let hour = ZoneHours.compute(hour: copy.nextHour, until: now, zones: [], open: copy.open, transitions: rest)
            hours += hour.stats.filter { !$0.isEmpty }
        }
        if now > copy.day {
            days.append(Day(start: copy.day, end: now, afterSeq: copy.dayFromSeq, throughSeq: .max, open: copy.dayOpen))
        }
        return (hours, days)
    }

    /// The visits the counting has open after `stored`: what the engine's zones must agree
    /// with at a start.
    public func openVisits(after stored: [Stored]) -> [ZoneHours.OpenVisit] {
        let rest = stored.filter { $0.seq > throughSeq }.map(\.transition)
        let end = max(nextHour, rest.map(\.time).max() ?? nextHour)
        return ZoneHours.compute(hour: nextHour, until: end, zones: [], open: open, transitions: rest).open
    }

    /// The transitions that make the counting agree with the engine's zones at a start
    /// (`inside`: every asset's memberships and visits under way, since their enter): an open
    /// one the engine no longer has (its zone removed or reshaped while stopped, its asset
    /// gone, its exit held for ordering when the daemon was killed) ends at `now`; one the
    /// counting never saw open (states from before the analytics, kept through a full disk,
    /// or its enter held when the daemon was killed) begins at its enter. Each kind apart;
    /// nothing when they agree.
    public static func reconcile(open: [ZoneHours.OpenVisit], inside: [ZoneHours.OpenVisit], at now: Timestamp)
        -> [ZoneTransition]
    {
        struct Key: Hashable {
            var zone: String
            var asset: String
            var visit: Bool
        }
        let counted = Set(open.map { Key(zone: $0.zone, asset: $0.asset, visit: $0.visit) })
        let engine = Set(inside.map { Key(zone: $0.zone, asset: $0.asset, visit: $0.visit) })
        let ended = open.filter { !engine.contains(Key(zone: $0.zone, asset: $0.asset, visit: $0.visit)) }
            .map { ZoneTransition(zone: $0.zone, asset: $0.asset, entered: false, time: now, visit: $0.visit) }
        let begun = inside.filter { !counted.contains(Key(zone: $0.zone, asset: $0.asset, visit: $0.visit)) }
            .map {
                ZoneTransition(
                    zone: $0.zone, asset: $0.asset, entered: true, time: min($0.entered, now), visit: $0.visit)
            }
        return ended + begun
    }
}

extension ZoneBucketStats {
    /// Nothing happened and nobody was inside: not worth a row.
    public var isEmpty: Bool { visits == 0 && assets == 0 && dwells.isEmpty && occupancyMax == 0 }
}

extension ZoneRollup {
    /// A day to count: its span, the stored transitions that belong to it (after `afterSeq`,
    /// up to `throughSeq`), and the visits open at its start.
    public struct Day: Sendable, Equatable {
        public var start: Timestamp
        public var end: Timestamp
        public var afterSeq: Int64
        public var throughSeq: Int64
        public var open: [ZoneHours.OpenVisit]
    }

    /// Counts days from the stored transitions taken one at a time, in order, each by the days
    /// it belongs to: a day's transitions (577,005 in the benchmark's) are never held at once.
    public struct DayCounter: Sendable {
        var days: [(day: Day, counter: ZoneHours.Counter)]

        public init(_ days: [Day]) {
            self.days = days.map { ($0, ZoneHours.Counter(hour: $0.start, until: $0.end, zones: [], open: $0.open)) }
        }

        /// Where the transitions the days need begin (after it), and end; nil when no day is to count.
        public var seqs: (after: Int64, through: Int64)? {
            guard let after = days.map(\.day.afterSeq).min(), let through = days.map(\.day.throughSeq).max() else {
                return nil
            }
            return (after, through)
        }

        public mutating func take(_ stored: Stored) {
            for i in days.indices where stored.seq > days[i].day.afterSeq && stored.seq <= days[i].day.throughSeq {
                days[i].counter.take(stored.transition)
            }
        }

        /// The days' figures (those where something was inside or happened), day after day.
        public func finish() -> [ZoneBucketStats] {
            days.flatMap { $0.counter.finish().stats.filter { !$0.isEmpty } }
        }

        /// The days from every transition at once: `roll`'s, the tests' reference.
        func counting(_ stored: [Stored]) -> [ZoneBucketStats] {
            var counter = self
            for s in stored { counter.take(s) }
            return counter.finish()
        }
    }
}
