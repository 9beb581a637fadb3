import BeaconConfig
import BeaconCore
import Foundation
import Simulation

/// Issue 41's ground truth: the simulated store's zone figures — visits and mean dwell per
/// zone — as beacond counts them (the engine's zone transitions, `ZoneHours` hour by hour),
/// beside the truth's (the simulator's true crossings) and beside what the zone rule gives
/// fed the true positions (its ceiling, `ZoneCeiling` at σ 0: the same hysteresis, no
/// locator error). The target is within 10 % of the ceiling on visits and mean dwell. Since
/// SPEC §10 the roll-ups count the engine's visits (`zone.visit`); the truth's and the
/// ceiling's crossings are counted as visits as they are.
///   swift run -c release beacond-position-bench analytics [hours]
func analyticsBench(hours: Int) {
    // Its alarm `zone-traffic` watches every zone on enter and exit: the ceiling takes those.
    let config = load("config/sim-store.yaml")
    let settings = config.simulation ?? SimulationSettings()
    let start = Timestamp.seconds(1_767_225_600)
    var sim = SiteSimulator(config: config, settings: settings, seed: 41, start: start)
    var engine = BeaconEngine(configuration: config.engineConfiguration, start: start)
    engine.recordsZoneTransitions = true
    var ceiling = ZoneCeiling(config: config, sigmas: [0])
    var truthNow: [String: Point] = [:]
    var truth: [ZoneTransition] = []
    var ours: [ZoneTransition] = []
    var nextCeiling = start
    let end = start + .hours(Int64(hours))
    while sim.now < end {
        let step = sim.advance()
        for s in step.sightings { _ = engine.ingest(s) }
        _ = engine.advance(to: sim.now)
        ours += engine.takeZoneTransitions()
        for p in step.truth { truthNow[p.asset] = p.position }
        truth += step.transitions
        while nextCeiling <= sim.now {
            ceiling.tick(at: nextCeiling, truth: truthNow)
            nextCeiling = nextCeiling + .seconds(1)
        }
    }
    engine.releaseAllZoneTransitions()
    ours += engine.takeZoneTransitions()
    let rule = zip(ceiling.alerts[0], ceiling.times[0]).map { alert, time in
        ZoneTransition(
            zone: alert.zone, asset: alert.asset, entered: alert.condition == .enter, time: time, visit: true)
    }
    truth = truth.map {
        ZoneTransition(zone: $0.zone, asset: $0.asset, entered: $0.entered, time: $0.time, visit: true)
    }
    ours = ours.filter(\.visit)
    let zones = config.zones.map(\.id)
    func figures(_ transitions: [ZoneTransition]) -> [String: (visits: Int, dwell: Double)] {
        var open: [ZoneHours.OpenVisit] = []
        var visits: [String: Int] = [:]
        var dwells: [String: [Double]] = [:]
        var rest = transitions[...]
        var hour = start
        while hour < end {
            let next = hour + .hours(1)
            let within = rest.prefix { $0.time < next }
            rest = rest.dropFirst(within.count)
            let made = ZoneHours.compute(hour: hour, until: next, zones: zones, open: open, transitions: Array(within))
            for s in made.stats {
                visits[s.zone, default: 0] += s.visits
                dwells[s.zone, default: []] += s.dwells
            }
            open = made.open
            hour = next
        }
        return Dictionary(
            uniqueKeysWithValues: zones.map { z in
                let d = dwells[z] ?? []
                return (z, (visits[z] ?? 0, d.isEmpty ? .nan : d.reduce(0, +) / Double(d.count)))
            })
    }
    let rejoin = ProcessInfo.processInfo.environment["BENCH_REJOIN"].flatMap(Int64.init).map { TimeSpan.seconds($0) }
    func rejoined(_ transitions: [ZoneTransition]) -> [ZoneTransition] {
        guard let rejoin else { return transitions }
        // An exit and a re-enter of the same asset and zone within `rejoin`: one visit.
        var out: [ZoneTransition] = []
        var pendingExit: [String: Int] = [:]
        for t in transitions {
            let key = t.asset + "|" + t.zone
            if t.entered, let i = pendingExit[key], t.time - out[i].time <= rejoin {
                out[i].zone = ""  // dropped
                pendingExit[key] = nil
                continue
            }
            if !t.entered { pendingExit[key] = out.count } else { pendingExit[key] = nil }
            out.append(t)
        }
        return out.filter { !$0.zone.isEmpty }
    }
    let (t, c, o) = (figures(rejoined(truth)), figures(rejoined(rule)), figures(rejoined(ours)))
    if let rejoin { print("  (a step outside shorter than \(rejoin) does not end a visit)") }
    print(
        "analytics: the simulated store's \(config.assets.count) tags, \(hours) h (seed 41); visits and mean dwell "
            + "of visits that ended, per zone")
    print(
        "  zone        visits: truth  ceiling  beacond (÷ ceiling)   mean dwell s: truth  ceiling  beacond (÷ ceiling)")
    var worst = (visits: 0.0, dwell: 0.0)
    for z in zones {
        let rv = Double(o[z]!.visits) / Double(max(1, c[z]!.visits))
        let rd = o[z]!.dwell / c[z]!.dwell
        worst = (max(worst.visits, abs(1 - rv)), max(worst.dwell, abs(1 - rd)))
        print(
            "  " + z.padding(toLength: 10, withPad: " ", startingAt: 0)
                + String(
                    format: "  %12d %8d %8d (%.2f)      %18.0f %8.0f %8.0f (%.2f)", t[z]!.visits, c[z]!.visits,
                    o[z]!.visits, rv, t[z]!.dwell, c[z]!.dwell, o[z]!.dwell, rd))
    }
    print(
        String(
            format: "  furthest from the ceiling: visits %.1f %%, mean dwell %.1f %% (target: within 10 %%)",
            worst.visits * 100, worst.dwell * 100))
}
