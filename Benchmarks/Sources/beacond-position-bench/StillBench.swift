import BeaconConfig
import BeaconCore
import Foundation
import Simulation

/// Issue 63: tags put down for the run (`stands_at`) and tags picked up after a while
/// (`picked_up_after`), against the simulator's truth.
///   BENCH_SEEDS=1,2,3 beacond-position-bench still [minutes] [bench/still.yaml]
/// Of the still tags, after their first minute: the published position's error (the last
/// `asset.position` at each second) and the estimate's; how many publishes moved 1 m or more
/// from the one before; the share of seconds the published position, and the told membership,
/// were on the truth's side of every zone's edge; the `zone.visit`s an hour. Of the picked-up
/// ones: from the first step of the walk to the first publish 2 m or more from where it stood.
func stillBench(minutes: Int, site path: String) {
    let seeds = (ProcessInfo.processInfo.environment["BENCH_SEEDS"] ?? "1,2,3").split(separator: ",").compactMap {
        UInt64($0)
    }
    let config = load(path, keepTags: true)
    let plans = Dictionary((config.simulation?.tags ?? []).map { ($0.asset, $0) }, uniquingKeysWith: { a, _ in a })
    let outlines = config.zones.map { zone -> Polygon? in
        guard case let .polygon(_, points) = zone.shape else { return nil }
        return Polygon(points.map { Point(x: $0[0], y: $0[1]) })
    }
    var published: [Double] = [], estimated: [Double] = []
    var publishes = 0, jumps = 0, sideRight = 0, toldRight = 0, judged = 0
    var visitsPerTag: [Int] = []
    var pickUps: [Double] = []
    var missedPickUps = 0
    var movingWhileStill = 0
    // What a poller sees every publish interval (2 s): the last published position
    var polled = 0, polledJumps = 0
    var lastPolled: [String: Point] = [:]
    // `BENCH_STILL_DUMP=file.json`: the first seed's published positions of one still tag
    // (`BENCH_STILL_TAG`, entrance-out), for bench/still-plot.py.
    let dumpTag = ProcessInfo.processInfo.environment["BENCH_STILL_TAG"] ?? "entrance-out"
    var dumped: [[Double]] = []
    for seed in seeds {
        let start = Timestamp.seconds(1_767_225_600)
        var sim = SiteSimulator(config: config, settings: config.simulation!, seed: seed, start: start)
        var engine = BeaconEngine(configuration: config.engineConfiguration, start: start)
        let ids = config.assets.map(\.id)
        var last: [String: AssetFix] = [:]
        var visits: [String: Int] = [:]
        var pickedAt: [String: Timestamp] = [:]
        var followedAt: [String: Timestamp] = [:]
        var next = start + .seconds(1)
        let end = start + .seconds(Int64(minutes * 60))
        while sim.now < end {
            let step = sim.advance()
            var events: [Event] = []
            for s in step.sightings { events += engine.ingest(s) }
            var truth: [String: Point] = [:]
            for p in step.truth { truth[p.asset] = p.position }
            for (id, plan) in plans where plan.pickedUpAfter != nil && pickedAt[id] == nil {
                if let p = truth[id], let home = plan.standsAt, error(p, home) > 0.01 { pickedAt[id] = sim.now }
            }
            guard sim.now >= next else { continue }
            next = next + .seconds(1)
            events += engine.advance(to: sim.now)
            for event in events {
                switch event.payload {
                case let .assetPosition(fix):
                    if plans[fix.asset]?.pickedUpAfter == nil, let before = last[fix.asset],
                        sim.now - start > .seconds(60)
                    {
                        publishes += 1
                        if error(before.position, fix.position) >= 1 {
                            jumps += 1
                            if ProcessInfo.processInfo.environment["BENCH_JUMPS"] == "1" {
                                print(
                                    "  jump \(fix.asset) at \(Int((sim.now - start).seconds)) s: \(before.position) -> \(fix.position), moving \(engine.tracker?.isMoving(fix.asset) == true), zones \(fix.zones)"
                                )
                            }
                        }
                    }
                    last[fix.asset] = fix
                    if seed == seeds.first, fix.asset == dumpTag {
                        dumped.append([(event.time - start).seconds, fix.position.x, fix.position.y, fix.accuracy])
                    }
                    if let home = plans[fix.asset]?.standsAt, let at = pickedAt[fix.asset],
                        followedAt[fix.asset] == nil,
                        error(fix.position, home) >= 2
                    {
                        followedAt[fix.asset] = event.time
                        pickUps.append((event.time - at).seconds)
                    }
                case let .zoneVisit(v): visits[v.asset, default: 0] += 1
                default: break
                }
            }
            if let traced = ProcessInfo.processInfo.environment["BENCH_TRACE"], let a = ids.firstIndex(of: traced),
                let home = plans[traced]?.standsAt, let at = pickedAt[traced], sim.now - at < .seconds(40),
                let fix = engine.tracker?.fixes[a].fix, let p = truth[traced] ?? Optional(home)
            {
                print(
                    "  \(Int((sim.now - at).seconds)) s: truth \(f(error(p, home))) m away, estimate \(f(error(fix.position, home))), moving \(engine.tracker?.isMoving(traced) == true)"
                )
            }
            guard sim.now - start > .seconds(60) else { continue }
            for (a, id) in ids.enumerated() {
                guard let plan = plans[id], plan.pickedUpAfter == nil, let home = plan.standsAt, let shown = last[id]
                else { continue }
                published.append(error(shown.position, home))
                if Int((sim.now - start).seconds) % 2 == 0 {
                    if let before = lastPolled[id] {
                        polled += 1
                        if error(before, shown.position) >= 1 { polledJumps += 1 }
                    }
                    lastPolled[id] = shown.position
                }
                if let fix = engine.tracker?.fixes[a].fix { estimated.append(error(fix.position, home)) }
                let truly = outlines.map { $0?.contains(home) ?? false }
                let placed = outlines.map { $0?.contains(shown.position) ?? false }
                let told = config.zones.map { shown.zones.contains($0.id) }
                judged += 1
                if truly == placed { sideRight += 1 }
                if truly == told { toldRight += 1 }
                if engine.tracker?.isMoving(id) == true { movingWhileStill += 1 }
            }
        }
        for (id, plan) in plans {
            if plan.pickedUpAfter == nil { visitsPerTag.append(visits[id] ?? 0) }
            if plan.pickedUpAfter != nil, followedAt[id] == nil { missedPickUps += 1 }
        }
    }
    if let path = ProcessInfo.processInfo.environment["BENCH_STILL_DUMP"], let home = plans[dumpTag]?.standsAt {
        let dump: [String: Any] = [
            "tag": dumpTag, "at": [home.x, home.y], "motion": config.positioning.motion.rawValue,
            "outlines": outlines.compactMap { $0?.points.map { [$0.x, $0.y] } }, "published": dumped,
        ]
        if let data = try? JSONSerialization.data(withJSONObject: dump) {
            FileManager.default.createFile(atPath: path, contents: data)
        }
    }
    let hours = Double(minutes) / 60
    print("still: \(path), \(minutes) min × seeds \(seeds.map(String.init).joined(separator: ","))")
    print(
        "  still tags after their first minute: published error p50 \(f(percentile(published, 0.5))) p90 "
            + "\(f(percentile(published, 0.9))) m, estimate p50 \(f(percentile(estimated, 0.5))) p90 "
            + "\(f(percentile(estimated, 0.9))) m")
    print(
        String(
            format:
                "  publishes %d, moved ≥ 1 m from the one before %d (%.1f %%); on the truth's side: position %.1f %%, told zones %.1f %%; said moving %.1f %% of seconds",
            publishes, jumps, 100 * Double(jumps) / Double(max(publishes, 1)),
            100 * Double(sideRight) / Double(max(judged, 1)),
            100 * Double(toldRight) / Double(max(judged, 1)), 100 * Double(movingWhileStill) / Double(max(judged, 1))))
    print(
        String(
            format:
                "  polled every 2 s: moved ≥ 1 m since the last poll %d of %d (%.2f %%); jumps an hour a still tag %.1f",
            polledJumps, polled, 100 * Double(polledJumps) / Double(max(polled, 1)),
            Double(jumps) / Double(max(visitsPerTag.count, 1)) / hours))
    print(
        String(
            format: "  zone.visit an hour a still tag: mean %.1f, most %.1f",
            Double(visitsPerTag.reduce(0, +)) / Double(max(visitsPerTag.count, 1)) / hours,
            Double(visitsPerTag.max() ?? 0) / hours))
    print(
        "  picked up: first publish 2 m from where it stood, after "
            + pickUps.sorted().map { String(format: "%.0f", $0) }.joined(separator: ", ") + " s"
            + (missedPickUps > 0 ? " (\(missedPickUps) never)" : ""))
}
