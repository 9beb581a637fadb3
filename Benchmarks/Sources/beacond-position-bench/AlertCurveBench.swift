import BeaconConfig
import BeaconCore
import Foundation

/// Issue 62: what `alarms[].confirm` buys. Each asset × zone's edge-rule membership, second by
/// second (as `zones` records it), is put through the engine's own `ZoneConfirmer` at each
/// `confirm`, and its alerts are judged against the truth: an alert matches a true crossing of
/// its kind when the crossing it names (`crossed_at`) is within 10 s of it; latency is from
/// the true crossing to when the alert was told. The truth's stays and steps out shorter than
/// `min_visit` (5 s) are passes, not entries or exits anyone acts on: their crossings are
/// counted apart, with how many were alerted, and such alerts count neither way.
///   BENCH_SEEDS=1,2,3 beacond-position-bench alerts [hours] [site.yaml ...]
/// `BENCH_CONFIRM=0,2,5` the confirms; `BENCH_SHARE=0.5` the share of the window.
func alertCurveBench(hours: Int, sites: [String]) {
    let seeds = (ProcessInfo.processInfo.environment["BENCH_SEEDS"] ?? "1,2,3").split(separator: ",").compactMap {
        UInt64($0)
    }
    let confirms = ZoneRule.list("BENCH_CONFIRM", "0,2,5,10,15,20,30").map { Int64($0) }
    let shares = ZoneRule.list("BENCH_SHARE", "0.5")
    var flapRules = ZoneFlapping.Rules()
    if let v = ZoneRule.list("BENCH_FLAP", "").first { flapRules.changes = Int(v) }
    if let v = ZoneRule.list("BENCH_FLAP_WINDOW", "").first { flapRules.window = .seconds(Int64(v)) }
    if let v = ZoneRule.list("BENCH_FLAP_SETTLE", "").first { flapRules.settle = .seconds(Int64(v)) }
    for site in sites {
        let runs = seeds.map { ZoneSeries.record(site: site, seed: $0, hours: hours) }
        let assetHours = Double(runs.reduce(0) { $0 + $1.estimates.count * hours })
        print("alerts: \(site), \(hours) h × seeds \(seeds.map(String.init).joined(separator: ","))")
        if ProcessInfo.processInfo.environment["BENCH_WHY"] == "1" {
            // The belief's walking probability: over every second, and at the true crossings.
            var all: [Double] = [], atCrossings: [Double] = [], atRawChanges: [Double] = []
            for run in runs {
                for i in run.truth.indices {
                    let walking = run.walking[i / run.zones.count]
                    all += walking.filter { !$0.isNaN }
                    for c in ZoneScore.changes(run.truth[i]) where !walking[c.t].isNaN {
                        atCrossings.append(walking[c.t])
                    }
                    for c in ZoneScore.changes(run.ours[i]) where !walking[c.t].isNaN {
                        atRawChanges.append(walking[c.t])
                    }
                }
            }
            // Issue 63's question: does the belief's walking probability tell a still tag (its
            // true place unchanged over the last 5 s) from a moving one (2 m or more in 5 s)?
            var still: [Double] = [], moving: [Double] = []
            for run in runs {
                for (a, places) in run.truePositions.enumerated() {
                    for t in 5..<places.count {
                        guard let now = places[t], let then = places[t - 5], !run.walking[a][t].isNaN else { continue }
                        let moved = ((now.x - then.x) * (now.x - then.x) + (now.y - then.y) * (now.y - then.y))
                            .squareRoot()
                        if moved < 0.01 {
                            still.append(run.walking[a][t])
                        } else if moved > 2 {
                            moving.append(run.walking[a][t])
                        }
                    }
                }
            }
            for w in [0.1, 0.2, 0.3, 0.5] {
                let s = Double(still.filter { $0 < w }.count) / Double(max(still.count, 1))
                let m = Double(moving.filter { $0 < w }.count) / Double(max(moving.count, 1))
                print(
                    String(
                        format: "  walking < %.1f: still seconds %.1f %%, moving seconds %.1f %%", w, 100 * s, 100 * m))
            }
            for (name, v) in [
                ("every second", all), ("true crossings", atCrossings), ("edge-rule changes", atRawChanges),
            ] {
                print(
                    "  walking probability, \(name): p10 \(f(percentile(v, 0.1))) p25 \(f(percentile(v, 0.25))) p50 \(f(percentile(v, 0.5))) p75 \(f(percentile(v, 0.75)))"
                )
            }
        }
        if let path = ProcessInfo.processInfo.environment["BENCH_ALERT_DUMP"], let run = runs.first {
            dumpHour(run, to: path)
        }
        for share in shares {
            for confirm in confirms {
                var score = AlertCurveScore()
                var flapScore = AlertCurveScore()
                for run in runs {
                    for i in run.truth.indices {
                        score.add(truth: run.truth[i], alerts: confirmed(run.ours[i], confirm: confirm, share: share))
                        let (alerts, notices) = decided(
                            run.ours[i], confirm: confirm, share: share, flapping: flapRules)
                        flapScore.add(truth: run.truth[i], alerts: alerts)
                        flapScore.notices += notices
                        flapScore.worstHour = max(flapScore.worstHour, Double(notices) / Double(hours))
                    }
                }
                print("  confirm \(String(format: "%2d", confirm)) s, share \(share): " + score.line(assetHours))
                print("             and flapping: " + flapScore.line(assetHours))
            }
        }
        // The visit model's smoother over the belief's share inside, looking `confirm` ahead.
        for confirm in confirms where ProcessInfo.processInfo.environment["BENCH_HMM"] != "0" {
            var score = AlertCurveScore()
            for run in runs {
                for i in run.truth.indices {
                    let smoothed = ZoneRule.hmmSmoother(run.mass[i], q: 0.01, gamma: 0.5, theta: 0.2, lag: Int(confirm))
                    let alerts = ZoneScore.changes(smoothed).map {
                        CurveAlert(told: $0.t + Int(confirm), crossed: $0.t, entered: $0.entered)
                    }
                    score.add(truth: run.truth[i], alerts: alerts)
                }
            }
            print("  hmm, looking \(String(format: "%2d", confirm)) s ahead: " + score.line(assetHours))
        }
    }
}

/// An alert as the bench sees it: told at second `told`, for a crossing at `crossed`.
struct CurveAlert {
    var told: Int
    var crossed: Int
    var entered: Bool
}

/// The edge rule's per-second membership through the engine's confirmer.
func confirmed(_ raw: [Bool], confirm: Int64, share: Double) -> [CurveAlert] {
    let start = Timestamp.seconds(1_767_225_600)
    var confirmer = ZoneConfirmer(confirm: .seconds(confirm), share: share, at: start)
    var out: [CurveAlert] = []
    for (t, inside) in raw.enumerated() {
        let now = start + .seconds(Int64(t))
        guard let change = confirmer.observe(inside: inside, at: now) else { continue }
        out.append(
            CurveAlert(told: t, crossed: Int((change.crossedAt - start).seconds.rounded()), entered: change.inside))
    }
    return out
}

/// The edge rule's membership through the confirmer and the flapping hold, as the engine
/// tells it: the alerts, and how many notices (alerts and flapping's) in all.
func decided(_ raw: [Bool], confirm: Int64, share: Double, flapping rules: ZoneFlapping.Rules) -> (
    [CurveAlert], Int
) {
    let start = Timestamp.seconds(1_767_225_600)
    var decision = ZoneDecision(confirm: .seconds(confirm), flapping: rules, at: start)
    var out: [CurveAlert] = []
    var notices = 0
    for (t, inside) in raw.enumerated() {
        for notice in decision.observe(inside, at: start + .seconds(Int64(t))) {
            notices += 1
            guard case let .changed(entered, crossedAt) = notice else { continue }
            out.append(CurveAlert(told: t, crossed: Int((crossedAt - start).seconds.rounded()), entered: entered))
        }
    }
    return (out, notices)
}

/// Alerts against the truth's crossings, with passes apart.
struct AlertCurveScore {
    static let window = 10
    static let minStay = 5
    var crossings = 0
    var matchedCrossings = 0
    var alerts = 0
    var matchedAlerts = 0
    var passCrossings = 0
    var passAlerts = 0
    var latency: [Double] = []
    /// Unmatched alerts: how far the nearest true crossing of their kind was.
    var falseDistance: [Double] = []
    /// With flapping: every notice, and the most a series made in an hour.
    var notices = 0
    var worstHour = 0.0

    /// The truth's crossings, each marked a pass when the stay it begins or ends lasted less
    /// than `minStay` (a corner clipped, a step out and back).
    static func crossings(_ truth: [Bool]) -> [(t: Int, entered: Bool, pass: Bool)] {
        let changes = ZoneScore.changes(truth)
        return changes.indices.map { k in
            let before = k > 0 ? changes[k].t - changes[k - 1].t : Int.max
            let after = k + 1 < changes.count ? changes[k + 1].t - changes[k].t : Int.max
            // An enter ends a stay outside and begins one inside; an exit the other way.
            let short = min(before, after) < minStay && k > 0
            return (changes[k].t, changes[k].entered, short || (k == 0 && after < minStay))
        }
    }

    mutating func add(truth: [Bool], alerts told: [CurveAlert]) {
        let truths = Self.crossings(truth)
        var used = Set<Int>()
        for c in truths {
            guard
                let j = told.indices.first(where: {
                    !used.contains($0) && told[$0].entered == c.entered && abs(told[$0].crossed - c.t) <= Self.window
                })
            else {
                if c.pass { passCrossings += 1 } else { crossings += 1 }
                continue
            }
            used.insert(j)
            if c.pass {
                passCrossings += 1
                passAlerts += 1
                continue
            }
            crossings += 1
            matchedCrossings += 1
            matchedAlerts += 1
            latency.append(Double(told[j].told - c.t))
        }
        // Alerts that matched a pass count neither way (`line`).
        alerts += told.count
        for j in told.indices where !used.contains(j) {
            let d = truths.filter { $0.entered == told[j].entered }.map { abs($0.t - told[j].crossed) }.min() ?? 9999
            falseDistance.append(Double(d))
        }
    }

    func line(_ assetHours: Double) -> String {
        let judged = alerts - passAlerts
        return String(
            format:
                "P %5.1f %% R %5.1f %% lat p50 %3.0f p95 %3.0f s | %6.1f alerts/asset-h | passes %d, %d alerted",
            100 * Double(matchedAlerts) / Double(max(judged, 1)),
            100 * Double(matchedCrossings) / Double(max(crossings, 1)), percentile(latency, 0.5),
            percentile(latency, 0.95), Double(alerts) / max(assetHours, 1), passCrossings, passAlerts)
            + (notices > 0
                ? String(
                    format: " | notices %.1f/asset-h, worst %.0f/h", Double(notices) / max(assetHours, 1), worstHour)
                : "")
            + (ProcessInfo.processInfo.environment["BENCH_WHY"] == "1"
                ? String(
                    format: " | unmatched: nearest crossing p25 %.0f p50 %.0f p75 %.0f s",
                    percentile(falseDistance, 0.25), percentile(falseDistance, 0.5), percentile(falseDistance, 0.75))
                : "")
    }
}

/// Per asset × zone of one run, for bench/alert-plot.py: each second's truth and edge-rule say,
/// the instant rule's alerts and what the default confirm with flapping tells (JSON).
func dumpHour(_ run: ZoneSeries, to path: String) {
    var series: [[String: Any]] = []
    let start = Timestamp.seconds(1_767_225_600)
    for i in run.truth.indices {
        var told: [[String: Any]] = []
        var decision = ZoneDecision(confirm: AlarmDefinition.defaultConfirm, at: start)
        for (t, inside) in run.ours[i].enumerated() {
            for notice in decision.observe(inside, at: start + .seconds(Int64(t))) {
                switch notice {
                case let .changed(entered, _): told.append(["t": t, "kind": entered ? "enter" : "exit"])
                case .flapping: told.append(["t": t, "kind": "flapping"])
                case let .settled(_, _, inside): told.append(["t": t, "kind": inside ? "settled in" : "settled out"])
                }
            }
        }
        let instant = confirmed(run.ours[i], confirm: 0, share: 0.5).map {
            ["t": $0.told, "kind": $0.entered ? "enter" : "exit"]
        }
        series.append([
            "zone": run.zones[i % run.zones.count], "asset": i / run.zones.count,
            "truth": run.truth[i].map { $0 ? 1 : 0 }, "said": run.ours[i].map { $0 ? 1 : 0 },
            "instant": instant, "told": told,
        ])
    }
    if let data = try? JSONSerialization.data(withJSONObject: series) {
        FileManager.default.createFile(atPath: path, contents: data)
    }
}
