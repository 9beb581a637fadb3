import BeaconConfig
import BeaconCore
import Simulation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The simulator's `walls`: a packet whose straight path from tag to receiver crosses a wall
/// loses the wall's `loss_db`, and only then. With every other ingredient of the channel off
/// (no shadowing, fading, loss or body), each RSSI is the path-loss model's, less the walls.
@Suite struct SimulatedWallsTests {
    static let site = """
        receivers:
          - {id: west, position: {x: 10, y: 10, level: 0}}
          - {id: east, position: {x: 20, y: 10, level: 0}}
        assets:
          - {id: a, beacon: {address: "D0:5E:00:00:00:01"}}
          - {id: b, beacon: {address: "D0:5E:00:00:00:02"}}
          - {id: c, beacon: {address: "D0:5E:00:00:00:03"}}
        simulation:
          floor: {width: 30, depth: 20}
          sigma_db: 0
          fast_fading: false
          packet_loss: 0
          body_loss_db: 0
          rssi_at_1m: -59
          path_loss_exponent: 2.0
          pause: [1s, 3s]
          walls:
            - [15, 0, 15, 20, 6]

        """

    @Test func aPacketThroughTheWallLosesItsLossAndNoOtherDoes() throws {
        let config = try ConfigLoader.load(yaml: Self.site, file: "walls.yaml")
        let settings = try #require(config.simulation)
        #expect(settings.walls == [.init(from: Point(x: 15, y: 0), to: Point(x: 15, y: 20), lossDB: 6)])
        let receivers = ["west": Point(x: 10, y: 10), "east": Point(x: 20, y: 10)]
        let assets = ["D0:5E:00:00:00:01": "a", "D0:5E:00:00:00:02": "b", "D0:5E:00:00:00:03": "c"]
        var sim = SiteSimulator(config: config, settings: settings, seed: 5, start: .seconds(1_763_805_600))
        var through = 0
        var clear = 0
        var wrong: [String] = []
        for _ in 0..<(5 * 120) {
            let step = sim.advance()
            let positions = Dictionary(uniqueKeysWithValues: step.truth.map { ($0.asset, $0.position) })
            for s in step.sightings {
                let tag = try #require(assets[s.address.uppercased()].flatMap { positions[$0] }, "\(s.address)")
                let receiver = try #require(receivers[s.receiver])
                let d = max(
                    ((tag.x - receiver.x) * (tag.x - receiver.x) + (tag.y - receiver.y) * (tag.y - receiver.y))
                        .squareRoot(), 0.1)
                let crosses = (tag.x - 15) * (receiver.x - 15) < 0
                let expected = Int((-59 - 20 * log10(d) - (crosses ? 6 : 0)).rounded())
                if crosses { through += 1 } else { clear += 1 }
                if s.rssi != expected { wrong.append("\(s.receiver) at \(tag): \(s.rssi), expected \(expected)") }
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) wrong, e.g. \(wrong.prefix(3))")
        #expect(through > 500 && clear > 500, "both sides heard: \(through) through the wall, \(clear) not")
    }
}
