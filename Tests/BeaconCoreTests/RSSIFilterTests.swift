import Glibc
import Simulation
import Testing

@testable import BeaconCore

/// AltBeacon's default filter, for comparison: the mean of the last 20 s of readings with
/// the top and bottom 10 % dropped (its RunningAverageRssiFilter).
struct RunningAverage20s {
    var readings: [(Timestamp, Double)] = []
    mutating func update(_ rssi: Double, at t: Timestamp) -> Double {
        readings.append((t, rssi))
        readings.removeAll { t - $0.0 > .seconds(20) }
        let sorted = readings.map(\.1).sorted()
        let cut = sorted.count / 10
        let kept = sorted[cut..<(sorted.count - cut)]
        return kept.reduce(0, +) / Double(kept.count)
    }
}

/// A person walks away from a receiver: -60 dBm, then -75 dBm from 60 s on, read at `rate`
/// Hz with 3 dB Gaussian noise and a 15 dB multipath fade on 10 % of readings.
struct WalkAway {
    static let stepAt = 60.0
    static func truth(_ t: Double) -> Double { t < stepAt ? -60 : -75 }

    static func readings(rate: Int, seed: UInt64) -> [(Double, Int)] {
        var rng = SeededRandom(seed: seed)
        var out: [(Double, Int)] = []
        for i in 0..<(150 * rate) {
            let t = Double(i) / Double(rate)
            let u1 = max(Double.random(in: 0..<1, using: &rng), 1e-12)
            let u2 = Double.random(in: 0..<1, using: &rng)
            var v = truth(t) + 3 * (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
            if Int.random(in: 0..<10, using: &rng) == 0 { v -= 15 }
            out.append((t, Int(v.rounded())))
        }
        return out
    }

    struct Figures {
        /// Seconds after the step until the estimate has covered 90 % of it.
        var rise = 0.0
        /// RMS error where the truth is steady (25 s after start or after the step).
        var steadyRMS = 0.0
        /// RMS error over the whole walk after warm-up, the step included.
        var trackingRMS = 0.0
    }

    /// Averages the figures over 10 noise seeds; `make` builds a fresh filter per run.
    static func measure(rate: Int, _ make: () -> (Double, Int) -> Double) -> Figures {
        var total = Figures()
        let seeds: [UInt64] = Array(1...10)
        for seed in seeds {
            let filter = make()
            var rise: Double?
            var steady = (0.0, 0)
            var tracking = (0.0, 0)
            for (t, rssi) in readings(rate: rate, seed: seed) {
                let e = filter(t, rssi)
                let err2 = (e - truth(t)) * (e - truth(t))
                if t >= stepAt, rise == nil, e <= -73.5 { rise = t - stepAt }
                if (t > 25 && t < stepAt) || t > stepAt + 25 { steady = (steady.0 + err2, steady.1 + 1) }
                if t > 25 { tracking = (tracking.0 + err2, tracking.1 + 1) }
            }
            total.rise += (rise ?? 90) / Double(seeds.count)
            total.steadyRMS += (steady.0 / Double(steady.1)).squareRoot() / Double(seeds.count)
            total.trackingRMS += (tracking.0 / Double(tracking.1)).squareRoot() / Double(seeds.count)
        }
        return total
    }
}

@Suite struct RSSIFilterTests {
    @Test(arguments: [1, 5, 10])
    func lessLagThanAltBeaconsRunningAverageForAboutTheSameNoise(rate: Int) {
        let ours = WalkAway.measure(rate: rate) {
            var filter: RSSIFilter?
            return { t, rssi in
                let time = Fixture.at(t)
                if filter == nil {
                    filter = RSSIFilter(rssi: rssi, at: time)
                } else {
                    filter!.update(rssi: rssi, at: time)
                }
                return filter!.estimate
            }
        }
        let theirs = WalkAway.measure(rate: rate) {
            var average = RunningAverage20s()
            return { t, rssi in average.update(Double(rssi), at: Fixture.at(t)) }
        }
        print(
            "walk-away at \(rate) Hz: ours rise \(ours.rise) s, steady \(ours.steadyRMS) dB, tracking \(ours.trackingRMS) dB; "
                + "20 s average rise \(theirs.rise) s, steady \(theirs.steadyRMS) dB, tracking \(theirs.trackingRMS) dB"
        )
        #expect(ours.rise < theirs.rise * 0.7)
        #expect(ours.steadyRMS < theirs.steadyRMS * 1.2)
        #expect(ours.trackingRMS < theirs.trackingRMS * 0.9)
    }

    @Test func aConstantSignalIsReproducedExactly() {
        var f = RSSIFilter(rssi: -70, at: Fixture.at(0))
        for t in 1...100 { f.update(rssi: -70, at: Fixture.at(Double(t) / 10)) }
        #expect(f.estimate == -70)
    }

    @Test func aReadingAfterASilenceIsTrustedAtOnce() {
        var f = RSSIFilter(rssi: -60, at: Fixture.at(0))
        for t in 1...50 { f.update(rssi: -60, at: Fixture.at(Double(t) / 10)) }
        // Ten minutes later the beacon is elsewhere: the first reading dominates.
        f.update(rssi: -80, at: Fixture.at(605))
        #expect(f.estimate < -78)
    }

    @Test func oneDeepFadeMovesTheEstimateLittle() {
        var f = RSSIFilter(rssi: -60, at: Fixture.at(0))
        for t in 1...50 { f.update(rssi: -60, at: Fixture.at(Double(t) / 5)) }
        f.update(rssi: -95, at: Fixture.at(10.2))
        #expect(f.estimate > -64)
    }
}
