import BeaconConfig
import BeaconCore
import Foundation
import Simulation

/// Issue 52: zone alerts and visits judged against the simulator's truth itself. Per second,
/// per asset and zone, it keeps whether the tag truly was inside, whether beacond's
/// membership said so, and how much of the locator's belief lay inside; then scores each
/// membership rule's alerts (precision, recall, latency against the true crossings) and
/// visits (count, mean dwell, start and end, splits against the truth's visits under the same
/// `rejoin` and minimum).
///   BENCH_SEEDS=1,2,3 swift run -c release beacond-position-bench zones [hours] [site.yaml ...]
func zoneTruthBench(hours: Int, sites: [String]) {
    let seeds = (ProcessInfo.processInfo.environment["BENCH_SEEDS"] ?? "1,2,3").split(separator: ",").compactMap {
        UInt64($0)
    }
    for site in sites {
        var runs: [ZoneSeries] = []
        for seed in seeds { runs.append(ZoneSeries.record(site: site, seed: seed, hours: hours)) }
        print("zones: \(site), \(hours) h × seeds \(seeds.map(String.init).joined(separator: ","))")
        printReach(runs)
        if let path = ProcessInfo.processInfo.environment["BENCH_DUMP"], let run = runs.first {
            // Per second: each asset's estimate and mass in the first zone, for a look by hand.
            var text = ""
            for t in run.estimates[0].indices {
                text += "\(t)"
                for a in run.estimates.indices {
                    let e = run.estimates[a][t]
                    text += String(
                        format: " %.2f %.2f %.3f %.2f", e?.x ?? .nan, e?.y ?? .nan, run.mass[a * run.zones.count][t],
                        run.walking[a][t])
                }
                text += "\n"
            }
            try? text.write(toFile: path, atomically: true, encoding: .utf8)
        }
        if let plot = ProcessInfo.processInfo.environment["BENCH_PLOT"], let run = runs.first {
            // `file,asset index,zone index`: per second, the truth, the live state, the told visits
            // and the mass, for bench/zone-plot.py.
            let parts = plot.split(separator: ",").map(String.init)
            var pairs: [Int] = []
            if parts.count == 3, parts[1] == "all" {
                pairs = Array(run.truth.indices)
            } else if parts.count == 3, let a = Int(parts[1]), let z = Int(parts[2]) {
                pairs = [a * run.zones.count + z]
            }
            for i in pairs {
                let z = i % run.zones.count
                let file = parts[1] == "all" ? "\(parts[0]).\(i / run.zones.count).\(z)" : parts[0]
                var visiting = [Bool](repeating: false, count: run.truth[i].count)
                for v in run.told[i] { for t in max(v.start, 0)..<min(v.end, visiting.count) { visiting[t] = true } }
                var text = "# \(run.zones[z])\n"
                for t in run.truth[i].indices {
                    text += String(
                        format: "%d %d %d %d %.3f\n", t, run.truth[i][t] ? 1 : 0, run.ours[i][t] ? 1 : 0,
                        visiting[t] ? 1 : 0, run.mass[i][t].isNaN ? -1 : run.mass[i][t])
                }
                try? text.write(toFile: file, atomically: true, encoding: .utf8)
            }
        }
        for rule in ZoneRule.candidates {
            var score = ZoneScore()
            for run in runs { score.add(run, rule: rule) }
            print("  " + rule.name.padding(toLength: 26, withPad: " ", startingAt: 0) + score.line)
            if rule.told { print("      per zone, visits/dwell: " + score.perZone) }
        }
    }
}

/// One run's per-second series: for each asset × zone, truth, beacond's membership and the
/// belief's mass inside (NaN without a fix).
struct ZoneSeries {
    var zones: [String] = []
    var truth: [[Bool]] = []
    var ours: [[Bool]] = []
    var mass: [[Double]] = []
    /// How deep inside (positive) the true position was.
    var depth: [[Double]] = []
    /// Per asset (not per zone): the belief's probability that the tag walks.
    var walking: [[Double]] = []
    /// Per asset: the estimate each second (nil without a fix), and the true position.
    var estimates: [[Point?]] = []
    var truePositions: [[Point?]] = []
    /// Per zone: its outline (nil for a proximity zone).
    var outlines: [Polygon?] = []
    /// The engine's `zone.visit` events per asset × zone, as seconds from the start.
    var told: [[(start: Int, end: Int)]] = []

    static func record(site path: String, seed: UInt64, hours: Int) -> ZoneSeries {
        let config = load(path)
        let settings = config.simulation ?? SimulationSettings()
        let start = Timestamp.seconds(1_767_225_600)
        var sim = SiteSimulator(config: config, settings: settings, seed: seed, start: start)
        var engine = BeaconEngine(configuration: config.engineConfiguration, start: start)
        let assets = config.assets.map(\.id)
        var series = ZoneSeries()
        series.zones = config.zones.map(\.id)
        let pairs = assets.count * series.zones.count
        series.truth = Array(repeating: [], count: pairs)
        series.ours = Array(repeating: [], count: pairs)
        series.mass = Array(repeating: [], count: pairs)
        series.depth = Array(repeating: [], count: pairs)
        series.told = Array(repeating: [], count: pairs)
        series.walking = Array(repeating: [], count: assets.count)
        series.estimates = Array(repeating: [], count: assets.count)
        series.truePositions = Array(repeating: [], count: assets.count)
        let assetIndex = Dictionary(uniqueKeysWithValues: assets.enumerated().map { ($1, $0) })
        let zoneIndex = Dictionary(uniqueKeysWithValues: series.zones.enumerated().map { ($1, $0) })
        let outlines = config.zones.map { zone -> Polygon? in
            if case let .polygon(_, points) = zone.shape {
                Polygon(points.map { Point(x: $0[0], y: $0[1]) })
            } else {
                nil
            }
        }
        series.outlines = outlines
        var truthNow: [String: [String]] = [:]
        var truePlace: [String: Point] = [:]
        var next = start + .seconds(1)
        let end = start + .hours(Int64(hours))
        while sim.now < end {
            let step = sim.advance()
            var events: [Event] = []
            for s in step.sightings { events += engine.ingest(s) }
            for p in step.truth {
                truthNow[p.asset] = p.zones
                truePlace[p.asset] = p.position
            }
            guard sim.now >= next else { continue }
            events += engine.advance(to: sim.now)
            for event in events {
                guard case let .zoneVisit(v) = event.payload, let a = assetIndex[v.asset], let z = zoneIndex[v.zone]
                else { continue }
                let second = { (t: Timestamp) in Int(((t - start).seconds).rounded()) - 1 }
                series.told[a * series.zones.count + z].append((second(v.entered), second(v.left)))
            }
            next = next + .seconds(1)
            for (a, asset) in assets.enumerated() {
                let evidence = engine.tracker?.zoneMass(of: asset)
                let says = engine.tracker?.edgeSays(of: asset)
                series.walking[a].append(evidence?.walking ?? .nan)
                series.estimates[a].append(evidence?.fix.position)
                series.truePositions[a].append(truePlace[asset])
                for (z, zone) in series.zones.enumerated() {
                    let i = a * series.zones.count + z
                    series.truth[i].append(truthNow[asset]?.contains(zone) ?? false)
                    series.ours[i].append(says?[z] ?? false)
                    series.mass[i].append(evidence?.mass[z] ?? .nan)
                    series.depth[i].append(
                        truePlace[asset].flatMap { p in outlines[z]?.signedDistance(p) } ?? -.infinity)
                }
            }
        }
        return series
    }
}

/// A way to decide membership from a series: causal for alerts, and for visits, what it
/// decides once it may look `lag` seconds ahead.
struct ZoneRule {
    var name: String
    var live: (_ run: ZoneSeries, _ i: Int) -> [Bool]
    var visits: ((_ run: ZoneSeries, _ i: Int) -> [Bool])?
    /// Visits are the engine's own `zone.visit` events.
    var told = false

    static func list(_ name: String, _ fallback: String) -> [Double] {
        (ProcessInfo.processInfo.environment[name] ?? fallback).split(separator: ",").compactMap { Double($0) }
    }

    static var candidates: [ZoneRule] {
        let lag = Int(ProcessInfo.processInfo.environment["BENCH_LAG"] ?? "30") ?? 30
        var rules: [ZoneRule] = [
            ZoneRule(name: "edge (shipped)", live: { run, i in run.ours[i] }, visits: nil),
            ZoneRule(name: "beacond zone.visit", live: { run, i in run.ours[i] }, visits: nil, told: true),
        ]
        for (hi, lo) in [(0.65, 0.35), (0.8, 0.2), (0.9, 0.1)]
        where ProcessInfo.processInfo.environment["BENCH_MASS"] != "0" {
            rules.append(
                ZoneRule(name: "mass \(hi)/\(lo)", live: { run, i in hysteresis(run.mass[i], hi, lo) }, visits: nil))
        }
        for q in list("BENCH_Q", "0.03") {
            for gamma in list("BENCH_GAMMA", "0.5") {
                for theta in list("BENCH_THETA", "0.5") {
                    rules.append(
                        ZoneRule(
                            name: "hmm q\(q) γ\(gamma) θ\(theta)",
                            live: { run, i in hmmFilter(run.mass[i], q: q, gamma: gamma, theta: theta) },
                            visits: { run, i in hmmSmoother(run.mass[i], q: q, gamma: gamma, theta: theta, lag: lag) }))
                }
            }
        }
        // The edge rule, but a tag the belief says stands keeps its zone unless the mass is sure.
        for w in list("BENCH_STILL", "") {
            rules.append(
                ZoneRule(
                    name: "edge, still < \(w) holds",
                    live: { run, i in
                        let walking = run.walking[i / run.zones.count]
                        var inside = false
                        return run.ours[i].indices.map { t in
                            let m = run.mass[i][t]
                            if run.ours[i][t] != inside,
                                walking[t].isNaN || walking[t] >= w || (inside ? m < 0.1 : m > 0.9)
                            {
                                inside.toggle()
                            }
                            return inside
                        }
                    }, visits: nil))
        }
        // The edge rule on an anchor: once the estimates of the last `window` seconds keep within
        // `radius` of their mean the tag stands, and its place is the mean of every estimate
        // since, until the last 5 s's mean leaves it by `leave` metres.
        for radius in list("BENCH_ANCHOR", "") {
            rules.append(
                ZoneRule(
                    name: "anchored r\(radius)",
                    live: { run, i in
                        let a = i / run.zones.count
                        guard let outline = run.outlines[i % run.zones.count] else { return run.ours[i] }
                        let places = anchored(run.estimates[a], radius: radius, window: 10, leave: 2 * radius)
                        var inside = false
                        return places.map { p in
                            guard let p else { return inside }
                            let d = outline.signedDistance(p)
                            if inside ? d < -0.5 : d > 0.5 { inside.toggle() }
                            return inside
                        }
                    }, visits: nil))
        }
        // The ceiling: the edge rule (margin h / 2) on the true depth plus an error that holds
        // for seconds as a locator's does (AR(1), 5 s time constant, standard deviation σ).
        for sigma in list("BENCH_CEIL_SIGMA", "") {
            for h in list("BENCH_CEIL_HYST", "0,1") {
                rules.append(
                    ZoneRule(
                        name: "truth+\(sigma) m, hyst \(h)",
                        live: { run, i in edgeOnTruth(run.depth[i], sigma: sigma, margin: h / 2, seed: UInt64(i)) },
                        visits: nil))
            }
        }
        return rules
    }

    static func anchored(_ estimates: [Point?], radius: Double, window: Int, leave: Double) -> [Point?] {
        var out: [Point?] = []
        var anchor: (x: Double, y: Double, n: Double)?
        var recent: [Point] = []
        func mean(_ ps: ArraySlice<Point>) -> Point {
            Point(
                x: ps.reduce(0) { $0 + $1.x } / Double(ps.count), y: ps.reduce(0) { $0 + $1.y } / Double(ps.count))
        }
        for e in estimates {
            guard let e else {
                out.append(anchor.map { Point(x: $0.x, y: $0.y) })
                continue
            }
            recent.append(e)
            if recent.count > window { recent.removeFirst() }
            if let a = anchor {
                let m = mean(recent.suffix(5))
                if ((m.x - a.x) * (m.x - a.x) + (m.y - a.y) * (m.y - a.y)).squareRoot() > leave {
                    anchor = nil
                } else {
                    anchor = ((a.x * a.n + e.x) / (a.n + 1), (a.y * a.n + e.y) / (a.n + 1), a.n + 1)
                }
            } else if recent.count == window {
                let m = mean(recent[...])
                if recent.allSatisfy({
                    ((($0.x - m.x) * ($0.x - m.x) + ($0.y - m.y) * ($0.y - m.y))).squareRoot() <= radius
                }) {
                    anchor = (m.x, m.y, Double(window))
                }
            }
            out.append(anchor.map { Point(x: $0.x, y: $0.y) } ?? e)
        }
        return out
    }

    static func edgeOnTruth(_ depth: [Double], sigma: Double, margin: Double, seed: UInt64) -> [Bool] {
        var random = SeededRandom(seed: seed &+ 977)
        let a = exp(-1.0 / 5)
        var e = sigma * random.gaussian()
        var inside = false
        return depth.map { d in
            e = a * e + sigma * (1 - a * a).squareRoot() * random.gaussian()
            let seen = d + e
            if inside ? seen < -margin : seen > margin { inside.toggle() }
            return inside
        }
    }

    static func hysteresis(_ m: [Double], _ hi: Double, _ lo: Double) -> [Bool] {
        var inside = false
        return m.map { v in
            if v.isNaN { return inside }
            if inside ? v < lo : v > hi { inside.toggle() }
            return inside
        }
    }

    /// Two states, a switch with probability q a second, the mass as a tempered likelihood ratio.
    static func forward(_ m: [Double], q: Double, gamma: Double, theta: Double) -> [Double] {
        var p = 0.0
        return m.map { v in
            let predicted = p * (1 - q) + (1 - p) * q
            guard !v.isNaN else {
                p = predicted
                return p
            }
            let c = min(max(v, 0.001), 0.999)
            let li = pow(c / theta, gamma)
            let lo = pow((1 - c) / (1 - theta), gamma)
            p = predicted * li / (predicted * li + (1 - predicted) * lo)
            return p
        }
    }

    static func hmmFilter(_ m: [Double], q: Double, gamma: Double, theta: Double) -> [Bool] {
        hysteresis(forward(m, q: q, gamma: gamma, theta: theta), 0.5, 0.5)
    }

    /// Each second decided with `lag` seconds of what followed: forward-backward over the window.
    static func hmmSmoother(_ m: [Double], q: Double, gamma: Double, theta: Double, lag: Int) -> [Bool] {
        let alpha = forward(m, q: q, gamma: gamma, theta: theta)
        var out = [Bool](repeating: false, count: m.count)
        for t in m.indices {
            // Backward messages from t + lag down to t.
            var bIn = 1.0
            var bOut = 1.0
            var s = min(m.count - 1, t + lag)
            while s > t {
                let v = m[s]
                var li = 1.0
                var lo = 1.0
                if !v.isNaN {
                    let c = min(max(v, 0.001), 0.999)
                    li = pow(c / theta, gamma)
                    lo = pow((1 - c) / (1 - theta), gamma)
                }
                let nIn = (1 - q) * li * bIn + q * lo * bOut
                let nOut = q * li * bIn + (1 - q) * lo * bOut
                let sum = nIn + nOut
                (bIn, bOut) = (nIn / sum, nOut / sum)
                s -= 1
            }
            let pin = alpha[t] * bIn
            out[t] = pin > (1 - alpha[t]) * bOut
        }
        return out
    }
}

/// Alerts and visits of many series against their truth.
struct ZoneScore {
    static let window = 10
    static let rejoin = 10
    static let minVisit = 5
    var crossings = 0
    var matchedCrossings = 0
    var alerts = 0
    var matchedAlerts = 0
    var enterLatency: [Double] = []
    var exitLatency: [Double] = []
    var truthVisits = 0
    var ourVisits = 0
    var truthDwell = 0.0
    var ourDwell = 0.0
    var startError: [Double] = []
    var endError: [Double] = []
    var longStays = 0
    var split = 0
    /// Per zone: the truth's visits and seconds, and the rule's.
    var zones: [String: (truth: Int, ours: Int, truthSeconds: Double, ourSeconds: Double)] = [:]

    mutating func add(_ run: ZoneSeries, rule: ZoneRule) {
        for i in run.truth.indices {
            let truth = run.truth[i]
            let live = rule.live(run, i)
            scoreAlerts(truth: truth, ours: live)
            let told = rule.told ? run.told[i] : Self.visits(rule.visits?(run, i) ?? live)
            scoreVisits(truth: truth, told: told)
            let t = Self.visits(truth)
            var z = zones[run.zones[i % run.zones.count], default: (0, 0, 0, 0)]
            z.truth += t.count
            z.ours += told.count
            z.truthSeconds += t.reduce(0) { $0 + Double($1.end - $1.start) }
            z.ourSeconds += told.reduce(0) { $0 + Double($1.end - $1.start) }
            zones[run.zones[i % run.zones.count]] = z
        }
    }

    /// Each zone's visits and mean dwell as a share of the truth's.
    var perZone: String {
        zones.keys.sorted().map { name in
            let z = zones[name]!
            let dwell = (z.ourSeconds / Double(max(z.ours, 1))) / (z.truthSeconds / Double(max(z.truth, 1)))
            return String(format: "%@ %.2f×/%.2f×", name, Double(z.ours) / Double(max(z.truth, 1)), dwell)
        }.joined(separator: ", ")
    }

    static func changes(_ s: [Bool]) -> [(t: Int, entered: Bool)] {
        var out: [(Int, Bool)] = []
        var previous = false
        for (t, v) in s.enumerated() where v != previous {
            out.append((t, v))
            previous = v
        }
        return out
    }

    mutating func scoreAlerts(truth: [Bool], ours: [Bool]) {
        let truths = Self.changes(truth)
        let alerted = Self.changes(ours)
        crossings += truths.count
        alerts += alerted.count
        var used = Set<Int>()
        for c in truths {
            // The earliest unused alert of that kind within the window of the crossing.
            guard
                let j = alerted.indices.first(where: {
                    !used.contains($0) && alerted[$0].entered == c.entered && abs(alerted[$0].t - c.t) <= Self.window
                })
            else { continue }
            used.insert(j)
            matchedCrossings += 1
            let latency = Double(alerted[j].t - c.t)
            if c.entered { enterLatency.append(latency) } else { exitLatency.append(latency) }
        }
        matchedAlerts += used.count
    }

    /// Stays: inside spans merged over gaps shorter than `rejoin`, kept from `minVisit`.
    static func visits(_ s: [Bool]) -> [(start: Int, end: Int)] {
        var spans: [(start: Int, end: Int)] = []
        var open: Int?
        for (t, v) in s.enumerated() {
            if v, open == nil { open = t }
            if !v, let o = open {
                spans.append((o, t))
                open = nil
            }
        }
        if let o = open { spans.append((o, s.count)) }
        var merged: [(start: Int, end: Int)] = []
        for span in spans {
            if let last = merged.last, span.start - last.end < rejoin {
                merged[merged.count - 1].end = span.end
            } else {
                merged.append(span)
            }
        }
        return merged.filter { $0.end - $0.start >= minVisit }
    }

    mutating func scoreVisits(truth: [Bool], told o: [(start: Int, end: Int)]) {
        let t = Self.visits(truth)
        truthVisits += t.count
        ourVisits += o.count
        truthDwell += t.reduce(0) { $0 + Double($1.end - $1.start) }
        ourDwell += o.reduce(0) { $0 + Double($1.end - $1.start) }
        for v in t {
            let overlapping = o.filter { $0.start < v.end && $0.end > v.start }
            if v.end - v.start >= 30 {
                longStays += 1
                if overlapping.count > 1 { split += 1 }
            }
            guard
                let best = overlapping.max(by: {
                    min($0.end, v.end) - max($0.start, v.start) < min($1.end, v.end) - max($1.start, v.start)
                })
            else { continue }
            startError.append(Double(abs(best.start - v.start)))
            endError.append(Double(abs(best.end - v.end)))
        }
    }

    var line: String {
        let recall = 100 * Double(matchedCrossings) / Double(max(crossings, 1))
        let precision = 100 * Double(matchedAlerts) / Double(max(alerts, 1))
        let latencies = enterLatency + exitLatency
        return String(
            format:
                "alerts P %5.1f %% R %5.1f %% (%d/%d) lat p50 %3.0f p95 %3.0f s | visits %.2f×, dwell %.2f×, start/end p50 %2.0f/%2.0f s, split %4.1f %%",
            precision, recall, alerts, crossings, percentile(latencies, 0.5), percentile(latencies, 0.95),
            Double(ourVisits) / Double(max(truthVisits, 1)),
            (ourDwell / Double(max(ourVisits, 1))) / (truthDwell / Double(max(truthVisits, 1))),
            percentile(startError, 0.5), percentile(endError, 0.5),
            100 * Double(split) / Double(max(longStays, 1)))
    }
}

/// How many of the truth's visits go deep enough into their zone, long enough, for a locator
/// of a given error to see at all: the ceiling any rule on its positions has.
func printReach(_ runs: [ZoneSeries]) {
    var visits: [(depth: Double, seconds: Int)] = []
    var crossings = 0
    var shortCrossings = 0
    for run in runs {
        for i in run.truth.indices {
            for v in ZoneScore.visits(run.truth[i]) {
                visits.append((run.depth[i][v.start..<v.end].max() ?? 0, v.end - v.start))
            }
            // Crossings of inside spans shorter than 5 s (a path clipping a corner).
            var open: Int?
            for (t, inside) in run.truth[i].enumerated() {
                if inside, open == nil { open = t }
                if !inside, let o = open {
                    crossings += 2
                    if t - o < 5 { shortCrossings += 2 }
                    open = nil
                }
            }
        }
    }
    let n = Double(max(visits.count, 1))
    let shallow = [0.5, 1.0, 2.0].map { d in 100 * Double(visits.filter { $0.depth < d }.count) / n }
    print(
        String(
            format:
                "  truth: %d visits (rejoin %d s, min %d s); deepest point < 0.5 m %.1f %%, < 1 m %.1f %%, < 2 m %.1f %%; "
                + "%d crossings, %.1f %% of them of stays under 5 s",
            visits.count, ZoneScore.rejoin, ZoneScore.minVisit, shallow[0], shallow[1], shallow[2], crossings,
            100 * Double(shortCrossings) / Double(max(crossings, 1))))
}
