/// A step of the wall clock is not time passing. A gateway without a battery-backed clock
/// boots at the time it last saved, hours behind after a power cut, and NTP sets it right
/// minutes later; an operator runs `date -s`. Taken as elapsed time, a step forward would
/// exit every region whose beacons are still in the room (and enter them again at the next
/// packet), fire dwell alerts early and lose every asset; a step back would hold every timer
/// until the clock caught up. The live daemon measures steps against the boot clock
/// (`ClockStepDetector`) and shifts the engine by them: every time it holds moves, so no timer
/// fires because of a step, and the events after it carry the corrected time.
extension BeaconEngine {
    public mutating func shiftClock(by d: TimeSpan) {
        guard d.nanoseconds != 0 else { return }
        now = now + d
        nextSweep = nextSweep + d
        nextRangingTick = nextRangingTick.map { $0 + d }
        nextPositionTick = nextPositionTick.map { $0 + d }
        timers.shift(by: d)
        for i in regions.indices { regions[i].shift(by: d) }
        for i in records.indices where records[i] != nil { records[i]!.shift(by: d) }
        tracker?.shift(by: d)
        calibration?.shift(by: d)
        for i in pending.indices { pending[i].time = pending[i].time + d }
    }
}

/// Tells a step of the wall clock from time passing: the difference between the wall clock
/// and a clock that only counts elapsed time (`CLOCK_BOOTTIME`) stays put while time passes,
/// drifts while NTP slews (ntpd at most 0.5 ms a second, chrony by default at most 83 ms),
/// and moves by the step when the clock is set. The live engine compares it at every turn,
/// at least once a second.
public struct ClockStepDetector: Sendable {
    /// Differences smaller than this are slewing or scheduling, not a step.
    public static let threshold = TimeSpan.seconds(1)
    private var offset: Int64?

    public init() {}

    /// The step since the last call, if the wall clock was set by more than `threshold`.
    public mutating func step(wall: Timestamp, elapsed: TimeSpan) -> TimeSpan? {
        let current = wall.nanoseconds - elapsed.nanoseconds
        defer { offset = current }
        guard let offset else { return nil }
        let step = current - offset
        return abs(step) > Self.threshold.nanoseconds ? TimeSpan(nanoseconds: step) : nil
    }
}
