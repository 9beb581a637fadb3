import BeaconConfig
import BeaconCore
import Simulation
import Testing

/// A phone of the simulator (SPEC §9): its private address changes every 15 minutes, and the
/// engine follows it by its key exactly as it follows a tag with a fixed address.
struct SimulatedPhoneTests {
    static func site(phone: String) -> String {
        """
        monitoring: {exit_timeout: 10s}
        \(Fixture.cornerReceivers)
        assets:
          - {id: staff-phone, beacon: \(phone)}
        zones:
          - {id: west, level: 0, polygon: [[0, 0], [10, 0], [10, 10], [0, 10]]}
          - {id: east, level: 0, polygon: [[10, 0], [20, 0], [20, 10], [10, 10]]}
        alarms:
          - {id: watch, zones: [west, east], on: [enter, exit]}
        simulation:
          floor: {width: 20, depth: 10}
          packet_loss: 0.2
          advertising_hz: 2
          pause: [60s, 600s]

        """
    }

    /// 50 minutes of the simulated floor: the phone's addresses and its zone alerts.
    static func run(_ yaml: String) throws -> (addresses: Set<String>, alerts: [String]) {
        let t0 = SimulatedTagsTests.t0
        let config = try ConfigLoader.load(yaml: yaml, file: "phone.yaml")
        var sim = SiteSimulator(config: config, settings: config.simulation!, seed: 9, start: t0)
        var engine = BeaconEngine(configuration: config.engineConfiguration, start: t0)
        var addresses: Set<String> = []
        var alerts: [String] = []
        while sim.now < t0 + .minutes(50) {
            let step = sim.advance().sightings
            engine.prepare(step)
            var events: [Event] = []
            for s in step {
                addresses.insert(s.address)
                events += engine.ingest(s)
            }
            events += engine.advance(to: sim.now)
            for e in events {
                if case let .zone(a) = e.payload { alerts.append("\(e.time) \(a.condition) \(a.zone) \(a.asset)") }
            }
        }
        return (addresses, alerts)
    }

    @Test func aPhoneChangingItsAddressIsFollowedAsATagWithAFixedOne() throws {
        let phone = try Self.run(Self.site(phone: "{irk: ec0234a357c8ad05341010a60a397d9b}"))
        let tag = try Self.run(Self.site(phone: "{address: \"D0:5E:00:00:00:01\"}"))
        #expect(phone.addresses.count >= 4, "50 minutes: four addresses, a new one every 15 minutes")
        #expect(phone.addresses.allSatisfy { BluetoothAddress($0)?.isResolvable == true })
        #expect(tag.addresses == ["D0:5E:00:00:00:01"])
        #expect(!tag.alerts.isEmpty)
        #expect(phone.alerts == tag.alerts, "the same enters and exits at the same times, none at a change of address")
    }
}
