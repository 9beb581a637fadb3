import BeaconConfig
import BeaconCore
import Foundation
import Simulation
import Testing

/// The simulator's calibration advertisements (`calibration.advertise`): every receiver
/// hears every other at the level the channel and the two antennas' gains give, and
/// switching them on leaves the tags' sightings exactly as they were.
struct SimulatedCalibrationTests {
    static let site = """
        receivers:
          - {id: west, position: {x: 5, y: 10}}
          - {id: east, position: {x: 25, y: 10}}
          - {id: north, position: {x: 15, y: 18}}
          - {id: upstairs, position: {x: 15, y: 10, level: 1}}
        assets:
          - {id: a, beacon: {address: "D0:5E:00:00:00:01"}}
        simulation: {packet_loss: 0, fast_fading: false, sigma_db: 0, receiver_gain_db: 3}

        """

    func run(_ yaml: String, seconds: Int64 = 20) throws -> (SiteSimulator, [Sighting]) {
        let config = try ConfigLoader.load(yaml: yaml, file: "calibration.yaml")
        var sim = SiteSimulator(config: config, settings: config.simulation!, seed: 3, start: .seconds(1_763_805_600))
        var sightings: [Sighting] = []
        while sim.now < .seconds(1_763_805_600 + seconds) { sightings += sim.advance().sightings }
        return (sim, sightings)
    }

    @Test func receiversHearEachOtherThroughBothAntennas() throws {
        let (sim, sightings) = try run(Self.site + "calibration: {advertise: true}\n")
        var engine = BeaconEngine(
            configuration: try ConfigLoader.load(yaml: Self.site, file: "c.yaml").engineConfiguration,
            start: .seconds(1_763_805_600))
        for s in sightings { _ = engine.ingest(s) }
        let pairs = try #require(engine.calibration?.pairs)
        // Three receivers on level 0 hear each other (6 ordered pairs); upstairs hears none.
        #expect(pairs.count == 6 && !pairs.contains { $0.hearer == "upstairs" || $0.advertiser == "upstairs" })
        let west = 0, east = 1
        let pair = try #require(pairs.first { $0.hearer == "east" && $0.advertiser == "west" })
        // No shadowing, fading or loss: −59 dBm + both gains − 20·log10(20 m), every packet.
        let expected = -59 + sim.receiverGains[west] + sim.receiverGains[east] - 20 * log10(20.0)
        #expect(abs(pair.meanRSSI - expected) <= 0.5 && pair.standardDeviation == 0, "\(pair) \(expected)")
        #expect(sim.receiverGains.contains { abs($0) > 0.5 })
    }

    @Test func theTagsAreHeardAsBefore() throws {
        let (_, with) = try run(Self.site + "calibration: {advertise: true}\n")
        let (_, without) = try run(Self.site)
        #expect(with.filter { $0.address.hasPrefix("D0:5E") } == without)
        #expect(with.count > without.count)
    }
}
