import Foundation
import TestSupport
import Testing

/// `beacond simulate` and the replay of what it writes.
@Suite(.serialized) struct SimulationTests {
    func simulate(seed: Int, dir: URL, site: String = "config/sim-store.yaml", duration: String = "3m") throws -> (
        trace: String, truth: String
    ) {
        let trace = dir.appendingPathComponent("trace-\(seed).jsonl").path
        let truth = dir.appendingPathComponent("truth-\(seed).jsonl").path
        let out = try runCommand(
            Executables.built("beacond"),
            [
                "simulate", "--site", site, "--duration", duration, "--seed", "\(seed)", "--out", trace,
                "--truth", truth,
            ])
        #expect(out.status == 0, "\(out.stderr)")
        return (trace, truth)
    }

    @Test func theSameSeedGivesTheSameTraceAndAnotherSeedAnother() throws {
        let dir = try Executables.temporaryDirectory()
        let a = try simulate(seed: 7, dir: dir)
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("again"), withIntermediateDirectories: true)
        let b = try simulate(seed: 7, dir: dir.appendingPathComponent("again"))
        let c = try simulate(seed: 8, dir: dir)
        let first = try String(contentsOfFile: a.trace, encoding: .utf8)
        let again = try String(contentsOfFile: b.trace, encoding: .utf8)
        let other = try String(contentsOfFile: c.trace, encoding: .utf8)
        #expect(!first.isEmpty && first == again)
        #expect(first != other)
        // 20 tags x 6 receivers x 5 Hz x 180 s with 20 % loss, less what falls below -100 dBm,
        // and the three tags of simulation.tags: 10 s, 1 s, and 100 ms for 30 s (~3,000).
        let lines = first.split(separator: "\n").count
        #expect(lines > 50_000 && lines < 86_400 + 3_600)
        let truth = try String(contentsOfFile: a.truth, encoding: .utf8)
        #expect(truth.contains("\"kind\":\"position\"") && truth.contains("\"kind\":\"zone\""))
    }

    /// Issue 64: `beacond replay` prints the same bytes whatever the engine's threads (the
    /// event ids made repeatable by `--id-nonce`).
    @Test func aReplayIsTheSameOnOneTwoAndFourThreads() throws {
        let dir = try Executables.temporaryDirectory()
        let sim = try simulate(seed: 4, dir: dir, site: "bench/still.yaml", duration: "2m")
        var outputs: [String] = []
        for threads in [1, 2, 4] {
            let out = try runCommand(
                Executables.built("beacond"),
                ["replay", "--config", "bench/still.yaml", "--threads", "\(threads)", "--id-nonce", "7", sim.trace])
            #expect(out.status == 0, "\(out.stderr)")
            outputs.append(out.stdout)
        }
        #expect(outputs[0].contains("beacond.asset.position") && outputs[0].contains("beacond.zone."))
        #expect(outputs[1] == outputs[0] && outputs[2] == outputs[0])
    }

    /// Issue 63: on a `motion: parked` site a tag put down says it stands (`moving: false`),
    /// placed by all it was heard since it stopped; elsewhere `moving` is null.
    @Test func aParkedSitesStandingTagsSayTheyStand() throws {
        let dir = try Executables.temporaryDirectory()
        let sim = try simulate(seed: 1, dir: dir, site: "bench/still.yaml", duration: "2m")
        func positions(_ config: String) throws -> [Substring] {
            let out = try runCommand(Executables.built("beacond"), ["replay", "--config", config, sim.trace])
            #expect(out.status == 0, "\(out.stderr)")
            return out.stdout.split(separator: "\n").filter {
                $0.contains("\"type\":\"beacond.asset.position\"") && $0.contains("\"subject\":\"entrance-out\"")
            }
        }
        let parked = try positions("bench/still.yaml")
        #expect(parked.last?.contains("\"moving\":false") == true, "\(parked.last ?? "")")
        #expect(parked.first?.contains("\"moving\":true") == true, "\(parked.first ?? "")")
        // The belief alone publishes many times as often
        let yaml = try String(contentsOfFile: "bench/still.yaml", encoding: .utf8)
        let other = dir.appendingPathComponent("stop-and-go.yaml").path
        try yaml.replacingOccurrences(of: "motion: parked", with: "motion: stop_and_go").write(
            toFile: other, atomically: true, encoding: .utf8)
        let wandering = try positions(other)
        #expect(wandering.allSatisfy { $0.contains("\"moving\":null") })
        #expect(wandering.count > 3 * parked.count, "\(wandering.count) against \(parked.count)")
    }

    @Test func replayingASimulatedTraceGivesPositionsAndZoneAlerts() throws {
        let dir = try Executables.temporaryDirectory()
        let sim = try simulate(seed: 3, dir: dir)
        let out = try runCommand(
            Executables.built("beacond"), ["replay", "--config", "config/sim-store.yaml", sim.trace])
        #expect(out.status == 0)
        let events = out.stdout.split(separator: "\n")
        let positions = events.filter { $0.contains("\"type\":\"beacond.asset.position\"") }
        #expect(positions.count > 100)
        let subjects = Set(
            positions.compactMap { line -> String? in
                guard let r = line.range(of: "\"subject\":\"tag-[0-9]+\"", options: .regularExpression) else {
                    return nil
                }
                return String(line[r])
            })
        #expect(subjects.count == 23, "every tag is located")
        #expect(events.contains { $0.contains("\"type\":\"beacond.zone.enter\"") })
        #expect(events.contains { $0.contains("\"type\":\"beacond.zone.exit\"") })
        #expect(
            positions.first?.contains("\"accuracy_m\":") == true
                && positions.first?.contains("\"receivers_used\":[") == true)
    }
}
