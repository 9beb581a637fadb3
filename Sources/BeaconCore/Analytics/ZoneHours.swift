/// The zones' hours (SPEC §8) from what entered and left them: a pure function of the visits
/// under way at an hour's start and the transitions within it, so that an hour is the same
/// whenever it is computed — as it closes, after a restart from the stored transitions, or by
/// a test from the stored `zone.visit` and `zone.enter`/`zone.exit` events — and a visit open
/// across a restart is one visit, counted whole. Visits, assets, dwell and asset-minutes come
/// from the visits' transitions; the occupancy from the live membership's (SPEC §10).
public enum ZoneHours {
    /// A visit under way: an asset in a zone since `entered`; a visit's (`visit`), or the
    /// live membership's.
    public struct OpenVisit: Sendable, Hashable {
        public var zone: String
        public var asset: String
        public var entered: Timestamp
        public var visit: Bool

        public init(zone: String, asset: String, entered: Timestamp, visit: Bool = false) {
            (self.zone, self.asset, self.entered, self.visit) = (zone, asset, entered, visit)
        }
    }

    /// The hour starting at `hour`, up to `until` (its end, or now for the hour under way):
    /// each zone's figures, and the visits still open at `until`. `zones`: the zones to report
    /// even when nothing happened in them (those in `open` and `transitions` are reported
    /// too). Transitions are taken in the order given — the order the engine made them — each
    /// at its time held between its zone's previous one's and the hour's end (a clock stepped
    /// back cannot make time run backwards in a zone, nor an exit come before its enter); an
    /// enter of an asset already inside, or an exit of one not inside, changes nothing.
    public static func compute(
        hour: Timestamp, until: Timestamp, zones: [String], open: [OpenVisit], transitions: [ZoneTransition]
    ) -> (stats: [ZoneBucketStats], open: [OpenVisit]) {
        var counter = Counter(hour: hour, until: until, zones: zones, open: open)
        for t in transitions { counter.take(t) }
        return counter.finish()
    }

    /// `compute` taking the transitions one at a time: a day of them (hundreds of thousands at
    /// a busy site) is counted as it is read from the state store, never held whole. Zones are
    /// counted apart, so one zone's figures are the same whether its transitions come alone
    /// or among every zone's.
    public struct Counter: Sendable {
        let end: Timestamp
        let hour: Timestamp
        /// Each zone's tally, in the order zones were first named, and where each zone's is.
        var tallies: [Tally] = []
        var slots: [String: Int] = [:]

        public init(hour: Timestamp, until: Timestamp, zones: [String], open: [OpenVisit]) {
            (self.hour, end) = (hour, max(hour, until))
            for name in zones { _ = slot(name) }
            for visit in open { tallies[slot(visit.zone)].carry(visit) }
        }

        private mutating func slot(_ zone: String) -> Int {
            if let slot = slots[zone] { return slot }
            tallies.append(Tally(zone: zone, hour: hour))
            slots[zone] = tallies.count - 1
            return tallies.count - 1
        }

        public mutating func take(_ t: ZoneTransition) {
            let i = slot(t.zone)
            tallies[i].take(t, at: min(max(t.time, tallies[i].last), end))
        }

        /// Each zone's figures, in the order zones were first named, and the visits open at the end.
        public func finish() -> (stats: [ZoneBucketStats], open: [OpenVisit]) {
            var stats: [ZoneBucketStats] = []
            var still: [OpenVisit] = []
            for var tally in tallies {
                let zone = tally.stats.zone
                stats.append(tally.close(at: end))
                for (visit, inside) in [(false, tally.inside), (true, tally.visiting)] {
                    still += inside.map { OpenVisit(zone: zone, asset: $0.key, entered: $0.value, visit: visit) }
                        .sorted { ($0.entered, $0.asset) < ($1.entered, $1.asset) }
                }
            }
            return (stats, still)
        }
    }

    /// One zone's hour as it is counted.
    struct Tally: Sendable {
        var stats: ZoneBucketStats
        /// Who is inside by the live membership, since when: the occupancy.
        var inside: [String: Timestamp] = [:]
        /// Whose visit is under way, since its enter: visits, assets, dwell, asset-seconds.
        var visiting: [String: Timestamp] = [:]
        var seen: Set<String> = []
        var last: Timestamp
        var occupied = 0.0
        var visited = 0.0

        init(zone: String, hour: Timestamp) {
            stats = ZoneBucketStats(zone: zone, hour: hour)
            last = hour
        }

        mutating func carry(_ visit: OpenVisit) {
            if visit.visit {
                guard visiting[visit.asset] == nil else { return }
                visiting[visit.asset] = visit.entered
                seen.insert(visit.asset)
            } else {
                guard inside[visit.asset] == nil else { return }
                inside[visit.asset] = visit.entered
                stats.occupancyMax = max(stats.occupancyMax, inside.count)
            }
        }

        mutating func take(_ t: ZoneTransition, at time: Timestamp) {
            occupied += Double(inside.count) * (time - last).seconds
            visited += Double(visiting.count) * (time - last).seconds
            last = time
            if t.visit {
                if t.entered {
                    guard visiting[t.asset] == nil else { return }
                    visiting[t.asset] = time
                    seen.insert(t.asset)
                    stats.visits += 1
                } else if let entered = visiting.removeValue(forKey: t.asset) {
                    stats.dwells.append(max(0, (time - entered).seconds))
                }
            } else if t.entered {
                guard inside[t.asset] == nil else { return }
                inside[t.asset] = time
                stats.occupancyMax = max(stats.occupancyMax, inside.count)
            } else {
                inside[t.asset] = nil
            }
        }

        mutating func close(at end: Timestamp) -> ZoneBucketStats {
            let rest = (end - max(last, stats.hour)).seconds
            occupied += Double(inside.count) * rest
            visited += Double(visiting.count) * rest
            stats.assetSeconds = visited
            stats.occupancySeconds = occupied
            let span = (end - stats.hour).seconds
            stats.occupancyMean = span > 0 ? occupied / span : Double(inside.count)
            stats.assets = seen.count
            stats.dwells.sort()
            return stats
        }
    }
}
