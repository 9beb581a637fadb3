import BeaconConfig
import BeaconCore
import BeaconRuntime
import Foundation
import Simulation

/// Issue 64: a warehouse on one gateway. The store's six receivers and channel, `tags` address
/// tags advertising once a second, 80 % of them put down for the run (`stands_at`, spread over
/// the floor) and 20 % walking; the engine's time per second of traffic, the simulator's not
/// counted.
///   BENCH_THREADS=1 beacond-position-bench warehouse [tags] [seconds] [config/sim-store.yaml]
/// `BENCH_MOTION` as elsewhere (the file's `stop_and_go` unless said; a warehouse says
/// `parked`). Printed: the engine's busy share of one core over the last half of the run (the
/// first half lets the beliefs settle), how many beliefs were moved in full and how many held.
func warehouseBench(tags: Int, seconds: Int, site path: String) {
    var config = load(path)
    config.assets = (0..<tags).map {
        AssetSpec(
            id: "tag-\($0)", name: nil,
            beacon: .address(String(format: "D0:5E:00:%02X:%02X:%02X", $0 >> 16, ($0 >> 8) & 0xFF, $0 & 0xFF)))
    }
    config.alarms = []
    var settings = config.simulation!
    settings.advertisingHz = 1
    var random = SeededRandom(seed: 64)
    settings.tags = (0..<tags).compactMap { i in
        // Every fifth tag walks; the others stand where they were put down.
        guard i % 5 != 0 else { return nil }
        var tag = SimulatedTag(asset: "tag-\(i)")
        tag.standsAt = Point(
            x: 1 + random.uniform() * (settings.width - 2), y: 1 + random.uniform() * (settings.depth - 2))
        return tag
    }
    let start = Timestamp.seconds(1_767_225_600)
    var sim = SiteSimulator(config: config, settings: settings, seed: 7, start: start)
    var engine = BeaconEngine(configuration: config.engineConfiguration, start: start)
    let threads = Int(ProcessInfo.processInfo.environment["BENCH_THREADS"] ?? "") ?? 1
    let lent = threads > 1 ? EngineThreads(threads: threads) : nil
    engine.shardRunner = lent
    defer { lent?.stop() }
    var busy = 0.0, count = 0, events = 0
    let measureFrom = start + .seconds(Int64(seconds / 2))
    var countedFrom: BeliefWork?
    // The estimate's error against the truth at each second, of the walking and the standing tags.
    var walkingErrors: [Double] = [], standingErrors: [Double] = [], inStrideErrors: [Double] = []
    var truth: [String: Point] = [:], aSecondAgo: [String: Point] = [:]
    var nextJudged = measureFrom
    while sim.now < start + .seconds(Int64(seconds)) {
        let step = sim.advance()
        for p in step.truth { truth[p.asset] = p.position }
        let t0 = DispatchTime.now().uptimeNanoseconds
        for s in step.sightings { events += engine.ingest(s).count }
        events += engine.advance(to: sim.now).count
        let spent = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
        if sim.now >= measureFrom {
            if countedFrom == nil { countedFrom = engine.tracker?.work }
            busy += spent
            count += step.sightings.count
        }
        if sim.now >= nextJudged, let fixes = engine.tracker?.fixes {
            nextJudged = nextJudged + .seconds(1)
            for (n, (id, fix, _)) in fixes.enumerated() {
                guard let fix, let p = truth[id] else { continue }
                if n % 5 == 0 {
                    walkingErrors.append(error(p, fix.position))
                    // In its stride: it moved over the last second
                    if let before = aSecondAgo[id], error(before, p) > 0.3 {
                        inStrideErrors.append(error(p, fix.position))
                    }
                } else {
                    standingErrors.append(error(p, fix.position))
                }
            }
            aSecondAgo = truth
        }
    }
    let measured = Double(seconds - seconds / 2)
    let work = engine.tracker?.work ?? BeliefWork()
    let full = work.full - (countedFrom?.full ?? 0)
    let held = work.held - (countedFrom?.held ?? 0)
    print(
        "warehouse: \(tags) tags (80 % standing) x 6 receivers x 1 adv/s, \(config.positioning.motion.rawValue), "
            + "\(threads) engine thread\(threads == 1 ? "" : "s"), the last \(Int(measured)) s of \(seconds): "
            + "\(count) sightings, engine busy \(f(busy)) s = \(f(busy / measured * 100)) % of one core (wall); "
            + "beliefs moved in full \(full), held \(held) (\(f(Double(held) / Double(max(full + held, 1)) * 100)) %)")
    print(
        "  error p50 / p90: walking tags \(f(percentile(walkingErrors, 0.5))) / \(f(percentile(walkingErrors, 0.9))) m "
            + "(in their stride \(f(percentile(inStrideErrors, 0.5))) / \(f(percentile(inStrideErrors, 0.9))) m), "
            + "standing \(f(percentile(standingErrors, 0.5))) / \(f(percentile(standingErrors, 0.9))) m")
}
