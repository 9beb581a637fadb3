import BeaconConfig
import BeaconCore
import Foundation
import Simulation

/// Issue 40, SPEC §7.3 on the simulator: 30 tags on a 20 × 10 m floor with four receivers and
/// 20 % packet loss — ten at 100 ms, ten at 1 s, ten at 10 s — for an hour with
/// `exit_timeout: 5s`, in one zone over the whole floor (an exit is a tag lost). A fixed
/// timeout would lose a tag at every gap of more than 5 s between its packets, counted from the
/// trace; the engine's exits are counted as it makes them, with the learned pace. The 10 s
/// tags are switched off at 50 minutes: how long after its last packet each one's exit came.
///   swift run -c release beacond-position-bench pace
func paceBench() {
    let classes: [(name: String, interval: String, prefix: String)] = [
        ("100 ms", "100ms", "D0:5E:00:00:01:"), ("1 s", "1s", "D0:5E:00:00:02:"), ("10 s", "10s", "D0:5E:00:00:03:"),
    ]
    var assets = "", tags = ""
    for c in classes {
        for n in 0..<10 {
            let id = "tag-\(c.interval)-\(n)"
            assets += "  - {id: \(id), beacon: {address: \"\(c.prefix)0\(n)\"}}\n"
            tags +=
                "    - {asset: \(id), interval: \(c.interval)"
                + (c.interval == "10s" ? ", off_after: 50m}\n" : "}\n")
        }
    }
    let yaml = """
        monitoring: {exit_timeout: 5s}
        tags: {missing_after: 2h}
        receivers:
          - {id: sw, position: {x: 2, y: 2}}
          - {id: se, position: {x: 18, y: 2}}
          - {id: nw, position: {x: 2, y: 8}}
          - {id: ne, position: {x: 18, y: 8}}
        assets:
        \(assets)zones:
          - {id: floor, level: 0, polygon: [[-50, -50], [70, -50], [70, 60], [-50, 60]]}
        alarms:
          - {id: watch, zones: [floor], on: [enter, exit]}
        positioning: {floor: [[-50, -50], [70, -50], [70, 60], [-50, 60]]}
        simulation:
          floor: {width: 20, depth: 10}
          packet_loss: 0.2
          tags:
        \(tags)
        """
    let config: Config
    do { config = try ConfigLoader.load(yaml: yaml, file: "pace.yaml") } catch {
        fatalError(error.errors.map(\.description).joined(separator: "\n"))
    }
    let start = Timestamp.seconds(1_763_805_600)
    var sim = SiteSimulator(config: config, settings: config.simulation!, seed: 11, start: start)
    var engine = BeaconEngine(configuration: config.engineConfiguration, start: start)
    var times: [String: [Timestamp]] = [:]
    var exits: [String: [Timestamp]] = [:]
    while sim.now < start + .minutes(60) {
        let step = sim.advance().sightings
        var events: [Event] = []
        for s in step {
            times[s.address, default: []].append(s.time)
            events += engine.ingest(s)
        }
        events += engine.advance(to: sim.now)
        for event in events {
            guard case let .zone(alert) = event.payload, alert.condition == .exit else { continue }
            exits[alert.asset, default: []].append(event.time)
        }
    }
    print("pace: 30 tags, 4 receivers, 20 % loss, exit_timeout 5 s, one hour; the 10 s tags switched off at 50 min")
    print("  interval  fixed 5 s timeout: tags lost  learned pace: tags lost  (while advertising)")
    for c in classes {
        var fixed = 0, paced = 0
        for n in 0..<10 {
            let heard = times["\(c.prefix)0\(n)", default: []]
            let last = heard.last ?? start
            fixed += zip(heard, heard.dropFirst()).filter { $1 - $0 > .seconds(5) }.count
            paced += exits["tag-\(c.interval)-\(n)", default: []].filter { $0 <= last }.count
        }
        print(
            "  \(c.name.padding(toLength: 8, withPad: " ", startingAt: 0))  \(String(format: "%26d", fixed))  \(String(format: "%22d", paced))"
        )
    }
    let delays = (0..<10).compactMap { n -> Double? in
        let last = times["D0:5E:00:00:03:0\(n)"]?.last
        guard let last, let exit = exits["tag-10s-\(n)", default: []].first(where: { $0 > last }) else { return nil }
        return (exit - last).seconds
    }.sorted()
    print(
        "  10 s tags switched off: \(delays.count) of 10 exits; after the last packet: "
            + String(
                format: "median %.1f s, max %.1f s (bound: 5 s + 3 intervals = 35 s, plus the jitter)",
                delays.isEmpty ? .nan : delays[delays.count / 2], delays.last ?? .nan))
}
