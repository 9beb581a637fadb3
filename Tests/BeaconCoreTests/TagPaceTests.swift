import Simulation
import Testing

@testable import BeaconCore

/// SPEC §7.3: a tag's advertising interval is learned, and nothing is declared gone sooner
/// than three of its intervals, whatever `exit_timeout` says (issue 40).
@Suite struct TagPaceTests {
    /// Gaps of a tag advertising every `interval` s, each ±20 % (uniform), with 10 % of its
    /// packets lost (a lost packet's gap adds to the next).
    static func gaps(interval: Double, count: Int, seed: UInt64) -> [Double] {
        var rng = SeededRandom(seed: seed)
        var out: [Double] = []
        var pending = 0.0
        while out.count < count {
            pending += interval * Double.random(in: 0.8...1.2, using: &rng)
            if Double.random(in: 0..<1, using: &rng) < 0.1 { continue }
            out.append(pending)
            pending = 0
        }
        return out
    }

    static func span(_ seconds: Double) -> TimeSpan { TimeSpan(nanoseconds: Int64((seconds * 1e9).rounded())) }

    @Test(arguments: [0.1, 1.0, 10.0])
    func theIntervalIsLearnedWithinTenPercentFromJitteredLossyGaps(interval: Double) throws {
        for seed in UInt64(1)...20 {
            var learner = AdvertisingInterval()
            for gap in Self.gaps(interval: interval, count: 64, seed: seed) { learner.add(gap: Self.span(gap)) }
            let learned = try #require(learner.interval).seconds
            #expect(abs(learned - interval) / interval < 0.10, "seed \(seed): learned \(learned) s for \(interval) s")
            #expect(learner.patience == learner.interval! * 3)
        }
    }

    @Test func scanResponsesAndAbsencesAreNotAPace() {
        var learner = AdvertisingInterval()
        #expect(learner.interval == nil && learner.patience == .milliseconds(0))
        // Each advertising event heard twice, 5 ms apart (its scan response), once a second
        for _ in 0..<20 {
            learner.add(gap: .milliseconds(995))
            learner.add(gap: .milliseconds(5))
        }
        // and one absence of an hour
        learner.add(gap: .hours(1))
        #expect(learner.interval == .milliseconds(995))
    }

    /// Packets of the store's iBeacon at `times` (seconds), heard by hci0.
    static func script(exitTimeout: TimeSpan, times: [Double]) -> Script {
        var settings = MonitoringSettings()
        settings.exitTimeout = exitTimeout
        settings.enterWindow = .seconds(30)
        var s = Script(Fixture.engine([Fixture.region("store")], settings: settings))
        for t in times { s.see(Fixture.sighting(t)) }
        return s
    }

    static func regionLines(_ s: inout Script) -> [String] {
        s.lines().filter { $0.contains("region.enter") || $0.contains("region.exit") }
    }

    /// A tag advertising every 10 s (±20 %) with `exit_timeout: 5s`: one enter and no exit
    /// for ten minutes; once it goes, the exit comes within exit_timeout + 3 intervals.
    @Test func aSlowTagIsNotGoneBetweenItsPacketsAndItsDepartureIsStillReported() {
        var rng = SeededRandom(seed: 7)
        var times: [Double] = [1]
        while times.last! < 600 { times.append(times.last! + 10 * Double.random(in: 0.8...1.2, using: &rng)) }
        var s = Self.script(exitTimeout: .seconds(5), times: times)
        let last = times.last!
        s.advance(to: last + 0.5)
        let during = Self.regionLines(&s)
        #expect(during.count == 1 && during[0].contains("region.enter"), "\(during)")
        s.advance(to: last + 60)
        let exits = Self.exitTimes(s.take())
        #expect(exits.count == 1, "\(exits)")
        if let exit = exits.first {
            #expect(exit - last >= 5 && exit - last <= 5 + 3 * 12, "exit \(exit - last) s after the last packet")
        }
    }

    /// The rule slows no fast tag: a 1 Hz beacon still exits at `exit_timeout`.
    @Test func aFastTagStillExitsAtExitTimeout() {
        var s = Self.script(exitTimeout: .seconds(5), times: (1...60).map(Double.init))
        s.advance(to: 120)
        #expect(Self.exitTimes(s.take()) == [65])
    }

    /// An asset whose tag advertises every 10 s (±20 %), in the "left" zone watched by an
    /// enter/exit alarm, with `lostAfter` 5 s: it stays in its zone for ten minutes — also
    /// between its first two packets, before any pace is learned (then it waits up to 60 s) —
    /// and once it is silent it leaves it within 5 s + 3 intervals.
    @Test func aSlowTagsAssetStaysInItsZoneAndLeavesItWhenGone() {
        let t0 = AssetTrackerTests.t0
        let alarm = AlarmDefinition(id: "watch", zones: ["left"], on: [.enter, .exit])
        var tracker = AssetTracker(
            site: AssetTrackerTests.site(alarms: [alarm]), calibrations: AssetTrackerTests.calibrations,
            lostAfter: .seconds(5), start: t0)
        var rng = SeededRandom(seed: 11)
        var packets: [Double] = [0.5]
        while packets.last! < 600 { packets.append(packets.last! + 10 * Double.random(in: 0.8...1.2, using: &rng)) }
        var alerts: [(Double, AlarmDefinition.Condition)] = []
        var next = 0
        for second in 0...700 {
            let t = Double(second)
            while next < packets.count, packets[next] <= t {
                for r in AssetTrackerTests.corners {
                    tracker.observe(
                        asset: 0, receiver: r.id, rssi: AssetTrackerTests.rssi(at: Point(x: 2, y: 5), from: r),
                        frameRSSIAt1m: nil, at: t0 + Self.span(packets[next]))
                }
                next += 1
            }
            var events: [Event] = []
            tracker.tick(at: t0 + .seconds(Int64(second)), events: &events)
            for case let .zone(alert) in events.map(\.payload) {
                alerts.append((t, alert.condition))
            }
        }
        #expect(alerts.map(\.1) == [.enter, .exit], "\(alerts)")
        if let exit = alerts.last, exit.1 == .exit {
            let silent = exit.0 - packets.last!
            #expect(silent >= 5 && silent <= 5 + 3 * 12 + 1, "left \(silent) s after its last packet")
        }
    }

    static func exitTimes(_ events: [Event]) -> [Double] {
        events.compactMap { e in
            guard case .regionExit = e.payload else { return nil }
            return (e.time - Fixture.t0).seconds
        }
    }
}
