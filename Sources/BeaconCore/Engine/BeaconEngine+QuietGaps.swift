extension BeaconEngine {
    /// From this long between the clock and where it is going, periodic work with nothing to
    /// do is skipped rather than run tick by tick. A trace whose next record is days (or, from
    /// a corrupt line, decades) later would otherwise run a position tick for every second of
    /// the gap: found by `fuzz/run sightings`, a replay that never ended. Gaps this short are
    /// run as they always were, so live operation and ordinary traces are untouched.
    static let quietGap = TimeSpan.minutes(10)

    /// Moves the periodic ticks past `horizon` (the next region timer, or the time being
    /// advanced to) where they would change nothing before it: the tracker once every asset
    /// is lost or never heard and nothing is fresh, ranging once no region has a beacon left.
    /// Housekeeping only forgets beacons, which no tick in the gap reads again, so it runs
    /// once, at its last tick before the horizon. Every tick keeps its phase. Returns whether
    /// anything moved.
    mutating func skipQuietTicks(before horizon: Timestamp) -> Bool {
        var moved = false
        if let p = nextPositionTick, p < horizon, let tracker, tracker.isQuiet(at: p) {
            nextPositionTick = Self.firstTick(from: p, every: tracker.tickInterval, atOrAfter: horizon)
            moved = true
        }
        if let r = nextRangingTick, r < horizon, rangingNonEmpty.isEmpty,
            rangingMembers.values.allSatisfy(\.isEmpty)
        {
            nextRangingTick = Self.firstTick(from: r, every: settings.rangingInterval, atOrAfter: horizon)
            moved = true
        }
        let lastSweep =
            Self.firstTick(from: nextSweep, every: Self.sweepInterval, atOrAfter: horizon)
            - Self.sweepInterval
        if lastSweep > nextSweep {
            nextSweep = lastSweep
            moved = true
        }
        return moved
    }

    /// The first of `start`, `start + every`, `start + 2 × every`, … at or after `horizon`.
    static func firstTick(from start: Timestamp, every interval: TimeSpan, atOrAfter horizon: Timestamp) -> Timestamp {
        guard start < horizon, interval.nanoseconds > 0 else { return start }
        let gap = (horizon - start).nanoseconds
        let steps = gap / interval.nanoseconds + (gap % interval.nanoseconds == 0 ? 0 : 1)
        return start + TimeSpan(nanoseconds: steps * interval.nanoseconds)
    }
}

extension AssetTracker {
    /// Whether a tick at `t` and every later one would do nothing until a sighting comes:
    /// no packet waiting, no reading fresh, and every asset already lost or never heard.
    func isQuiet(at t: Timestamp) -> Bool {
        states.allSatisfy { state in
            state.heard.isEmpty && (state.lost || state.lastHeard == nil)
                && state.readings.values.allSatisfy { t - $0.lastSeen > AssetTracker.readingFreshness }
        }
    }
}
