import BeaconCore
import Testing

/// What a repeated condition (a dead webhook's expiries) puts in the log, on the injected
/// clock: the first at once, then one summed line a minute, and the rest at stop.
@Suite struct LogSummaryTests {
    let t0 = Timestamp.seconds(1_767_225_600)

    @Test func theFirstIsToldAtOnceThenSumsOnceAMinute() {
        var summary = LogSummary()
        #expect(summary.add(3, at: t0) == .init(count: 3, since: nil))
        // Every second for a minute: quiet, counting
        for s in 1...59 { #expect(summary.add(2, at: t0 + .seconds(Int64(s))) == nil) }
        #expect(summary.untold == 118)
        #expect(summary.add(2, at: t0 + .seconds(60)) == .init(count: 120, since: t0))
        #expect(summary.untold == 0)
        #expect(summary.add(1, at: t0 + .seconds(61)) == nil)
        #expect(summary.flush(at: t0 + .seconds(70)) == .init(count: 1, since: t0 + .seconds(60)))
        #expect(summary.flush(at: t0 + .seconds(71)) == nil, "nothing left to tell")
    }

    @Test func nothingExpiredIsNotALine() {
        var summary = LogSummary()
        #expect(summary.add(0, at: t0) == nil)
        #expect(summary.flush(at: t0) == nil)
        // …and does not start the minute: the first real expiry is still told at once
        #expect(summary.add(1, at: t0 + .seconds(5)) == .init(count: 1, since: nil))
    }

    /// The wall clock set back (NTP): the minute is not counted from a time in the future.
    @Test func aClockSetBackDoesNotSilenceTheLog() {
        var summary = LogSummary()
        _ = summary.add(1, at: t0)
        #expect(summary.add(1, at: t0 - .minutes(30)) == .init(count: 1, since: t0))
    }
}
