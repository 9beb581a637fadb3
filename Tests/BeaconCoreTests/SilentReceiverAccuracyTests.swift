import BeaconConfig
import BeaconCore
import Simulation
import Testing

/// SPEC §10: an asset's `accuracy_m` widens when a receiver it relied on falls silent (an
/// unplugged dongle), and narrows again when it is back. A tag put down 1 m from the receiver
/// at the store's front left corner, on the store's channel; that receiver's sightings are
/// dropped from minute 2 to minute 3.
@Suite struct SilentReceiverAccuracyTests {
    static let site = StandingNearAnEdgeTests.site.replacing("stands_at: [8, 3]", with: "stands_at: [5, 4]")

    @Test func accuracyWidensWithinTenSecondsOfTheSilenceAndNarrowsAfter() throws {
        let config = try ConfigLoader.load(yaml: Self.site, file: "silent.yaml")
        let start = Timestamp.seconds(1_767_225_600)
        var sim = SiteSimulator(config: config, settings: config.simulation!, seed: 3, start: start)
        var engine = BeaconEngine(configuration: config.engineConfiguration, start: start)
        var accuracy: [(second: Int, metres: Double)] = []
        var next = start + .seconds(1)
        while sim.now < start + .minutes(4) {
            let step = sim.advance()
            let second = Int((sim.now - start).seconds)
            let silent = (120..<180).contains(second)
            for s in step.sightings where !(silent && s.receiver == "rx-front-left") { _ = engine.ingest(s) }
            _ = engine.advance(to: sim.now)
            if sim.now >= next, let fix = engine.tracker?.zoneMass(of: "outside")?.fix {
                accuracy.append((second, fix.accuracy))
                next = next + .seconds(1)
            }
        }
        func median(_ range: Range<Int>) -> Double {
            let values = accuracy.filter { range.contains($0.second) }.map(\.metres).sorted()
            return values.isEmpty ? .nan : values[values.count / 2]
        }
        let before = median(90..<120)
        let silent = median(130..<180)
        let after = median(210..<240)
        #expect(silent > 1.2 * before, "accuracy_m \(before) m before, \(silent) m while silent")
        // Within 10 s of the silence it has widened past what it was.
        let widened = accuracy.first { $0.second >= 120 && $0.metres > 1.2 * before }
        #expect(widened.map { $0.second - 120 <= 10 } == true, "widened at \(String(describing: widened))")
        #expect(after < 0.85 * silent, "accuracy_m \(silent) m while silent, \(after) m after")
    }
}
