import BeaconConfig
import BeaconCore
import Synchronization
import Testing

@testable import BeaconRuntime

/// The live engine on injected clocks: a step of the wall clock, told from time passing by
/// the boot clock, shifts the engine instead of passing as time (`BeaconEngine.shiftClock`).
@Suite struct LiveEngineClockTests {
    static let start = Timestamp.seconds(1_763_805_600)

    static func sighting(_ t: Timestamp) -> Sighting {
        try! SightingRecord.parse(
            line: #"{"t":\#(Double(t.nanoseconds) / 1e9),"receiver":"hci0","address":"C3:11:22:33:44:55","rssi":-60,"#
                + #""manufacturer_data":{"76":"0215e2c56db5dffb48d2b060d0f5a71096e0002a0007c5"}}"#)
    }

    /// Beacon heard every second for 20 s of boot time, the wall clock set `step` seconds
    /// forward after 10 s; the region events published and the steps reported.
    static func run(step: Int64, elapsedClock: Bool) -> (events: [String], steps: [TimeSpan]) {
        let config = try! ConfigLoader.load(
            yaml: """
                gateway: {id: test-gw}
                monitoring: {enter_sightings: 1, exit_timeout: 30s}
                clients:
                  - id: app
                    regions:
                      - {id: store, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0}

                """, file: "test.yaml")
        let published = Mutex<[String]>([])
        let steps = Mutex<[TimeSpan]>([])
        let live = LiveEngine(
            engine: BeaconEngine(configuration: config.engineConfiguration, start: start), clock: { start },
            hooks: .init(onClockStep: { step in steps.withLock { $0.append(step) } }),
            publish: { events in
                published.withLock { list in
                    for e in events {
                        switch e.payload {
                        case .regionState, .regionEnter, .regionExit:
                            list.append("\((e.time - start).seconds) \(e.payload.kind)")
                        default: break
                        }
                    }
                }
            })
        for s in Int64(0)...20 {
            let wall = start + .seconds(s) + (s > 10 ? .seconds(step) : .seconds(0))
            live.submit(.sightings([sighting(wall)]))
            live.turn(now: wall, elapsed: elapsedClock ? .seconds(100 + s) : nil)
        }
        return (published.withLock { $0 }, steps.withLock { $0 })
    }

    @Test func aStepForwardOfTheWallClockIsNotTakenAsSilence() {
        let (events, steps) = Self.run(step: 3600, elapsedClock: true)
        #expect(events == ["0.0 region.state"])
        #expect(steps == [.seconds(3600)])
    }

    @Test func withoutTheBootClockTheSameStepExitsAndEntersAgain() {
        let (events, steps) = Self.run(step: 3600, elapsedClock: false)
        #expect(events == ["0.0 region.state", "40.0 region.exit", "3611.0 region.enter"])
        #expect(steps.isEmpty)
    }
}
