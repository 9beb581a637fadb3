import BeaconConfig
import BeaconCore
import Simulation
import Testing

/// `simulation.tags`: tags with a pace, telemetry and a battery of their own, and the rules of
/// SPEC §7 shown on what the simulator makes of them (issue 40).
struct SimulatedTagsTests {
    static let t0 = Timestamp.seconds(1_763_805_600)

    /// A 20 × 10 m floor, four receivers, one zone over the whole floor watched for enter and
    /// exit: an asset leaves it only by being lost. `exit_timeout: 5s`.
    static func site(tags: String, assets: Int = 3, missingAfter: String = "10m") -> String {
        """
        monitoring: {exit_timeout: 5s}
        tags: {missing_after: \(missingAfter)}
        \(Fixture.cornerReceivers)
        assets:
        \((1...assets).map { "  - {id: tag-\($0), beacon: {address: \"D0:5E:00:00:00:0\($0)\"}}" }.joined(separator: "\n"))
        zones:
          - {id: floor, level: 0, polygon: [[-50, -50], [70, -50], [70, 60], [-50, 60]]}
        alarms:
          - {id: watch, zones: [floor], on: [enter, exit]}
        positioning: {floor: [[-50, -50], [70, -50], [70, 60], [-50, 60]]}
        simulation:
          floor: {width: 20, depth: 10}
          packet_loss: 0.2
          advertising_hz: 5
        \(tags)
        """
    }

    /// The simulator's sightings for `seconds`, and the engine's events over them, the engine
    /// advanced every 100 ms as the live daemon's loop does.
    static func run(_ yaml: String, seconds: Int64) throws -> (sightings: [Sighting], events: [Event]) {
        let config = try ConfigLoader.load(yaml: yaml, file: "tags.yaml")
        var sim = SiteSimulator(config: config, settings: config.simulation!, seed: 5, start: t0)
        var engine = BeaconEngine(configuration: config.engineConfiguration, start: t0)
        var sightings: [Sighting] = []
        var events: [Event] = []
        while sim.now < t0 + .seconds(seconds) {
            let step = sim.advance().sightings
            for s in step { events += engine.ingest(s) }
            events += engine.advance(to: sim.now)
            sightings += step
        }
        return (sightings, events)
    }

    static func exits(_ events: [Event], of asset: String) -> [Timestamp] {
        events.compactMap { e in
            guard case let .zone(alert) = e.payload, alert.asset == asset, alert.condition == .exit else { return nil }
            return e.time
        }
    }

    /// Gaps longer than `timeout` between one tag's packets: each is an exit a fixed timeout
    /// would report, the tag still there.
    static func gaps(_ sightings: [Sighting], of address: String, longerThan timeout: TimeSpan) -> Int {
        let times = sightings.filter { $0.address == address }.map(\.time)
        return zip(times, times.dropFirst()).filter { $1 - $0 > timeout }.count
    }

    /// Tags at 100 ms, 1 s and 10 s in one store with `exit_timeout: 5s`, for ten minutes.
    /// A fixed timeout would lose the 10 s tag at nearly every packet; the learned pace loses
    /// none of them, and when the 10 s tag is switched off its exit still comes within
    /// exit_timeout + 3 intervals of its last packet.
    @Test func slowTagsAreNotLostBetweenTheirPacketsAndADepartureIsStillReported() throws {
        let yaml = Self.site(
            tags: """
                  tags:
                    - {asset: tag-1, interval: 100ms}
                    - {asset: tag-2, interval: 1s}
                    - {asset: tag-3, interval: 10s, off_after: 10m}
                """, missingAfter: "1h")
        let (sightings, events) = try Self.run(yaml, seconds: 11 * 60)
        let timeout = TimeSpan.seconds(5)
        #expect(Self.gaps(sightings, of: "D0:5E:00:00:00:03", longerThan: timeout) >= 50, "a fixed 5 s timeout")
        #expect(Self.gaps(sightings, of: "D0:5E:00:00:00:01", longerThan: timeout) == 0)
        for asset in ["tag-1", "tag-2"] { #expect(Self.exits(events, of: asset).isEmpty, "\(asset)") }
        let exits = Self.exits(events, of: "tag-3")
        #expect(exits.count == 1, "\(exits)")
        let last = try #require(sightings.last { $0.address == "D0:5E:00:00:00:03" }?.time)
        #expect(last < Self.t0 + .minutes(10))
        if let exit = exits.first {
            #expect(exit > last + timeout && exit <= last + timeout + .seconds(3 * 12 + 1), "\(exit - last) after")
        }
    }

    /// Adding a tag with a schedule of its own leaves every other tag's sightings as they were
    /// (it draws from a stream of its own), so the shipped store's figures stay comparable.
    @Test func aScheduledTagLeavesTheOtherTagsAlone() throws {
        let plain = try Self.run(Self.site(tags: "", assets: 2), seconds: 60).sightings
        let more = try Self.run(
            Self.site(tags: "  tags: [{asset: tag-3, interval: 2s, telemetry: tlm}]", assets: 3), seconds: 60
        ).sightings
        #expect(more.filter { $0.address != "D0:5E:00:00:00:03" } == plain)
        #expect(more.contains { $0.address == "D0:5E:00:00:00:03" })
    }

    /// A TLM tag's battery drains at its rate and crosses `battery_low` once; a Ruuvi tag's
    /// frames carry its own address and a movement counter; a tag switched off is missing
    /// after `missing_after`, at its last place.
    @Test func batteriesDrainTelemetryIsSentAndASwitchedOffTagGoesMissing() throws {
        let yaml = Self.site(
            tags: """
                  tags:
                    - {asset: tag-1, interval: 1s, telemetry: tlm, battery: {millivolts: 2530, drain_per_hour: 3600}}
                    - {asset: tag-2, interval: 500ms, telemetry: ruuvi, battery: {millivolts: 2900}}
                    - {asset: tag-3, interval: 1s, off_after: 30s}
                """, missingAfter: "1m")
        let (sightings, events) = try Self.run(yaml, seconds: 150)
        let tlm = sightings.filter { $0.address.hasSuffix("01") && !$0.serviceData.isEmpty }
        // Every tenth of ~150 events, heard by about four receivers × 80 %.
        #expect(tlm.count > 20 && tlm.count < 80, "\(tlm.count)")
        let ruuvi = sightings.filter { $0.address.hasSuffix("02") }
        #expect(!ruuvi.isEmpty && ruuvi.allSatisfy { $0.manufacturerData.first?.company == 0x0499 })
        if case let .success(.ruuvi(frame)) = RuuviDecoder.decode(ruuvi[0].manufacturerData[0].payload) {
            #expect(frame.address == "D0:5E:00:00:00:02" && frame.batteryMillivolts == 2900)
        } else {
            Issue.record("not a Ruuvi frame")
        }
        let low = events.filter { if case .tag(let t) = $0.payload { t.condition == .batteryLow } else { false } }
        #expect(low.count == 1)
        // 2530 mV less 1 mV a second is under 2500 mV after 30 s; told at the next TLM frame.
        if let at = low.first?.time { #expect(at - Self.t0 > .seconds(30) && at - Self.t0 < .seconds(42)) }
        let missing = events.filter { if case .tag(let t) = $0.payload { t.condition == .missing } else { false } }
        #expect(
            missing.count == 1
                && (missing.first.flatMap { if case .tag(let t) = $0.payload { t.asset } else { nil } }) == "tag-3",
            "\(missing)")
        let last = try #require(sightings.last { $0.address.hasSuffix("03") }?.time)
        #expect(last < Self.t0 + .seconds(31))
        if let at = missing.first?.time { #expect(at - last >= .minutes(1) && at - last < .seconds(61)) }
    }
}
