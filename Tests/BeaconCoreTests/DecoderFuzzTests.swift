import Simulation
import Testing

@testable import BeaconCore

/// Radio input is hostile: no byte string of any length may trap a decoder.
@Suite struct DecoderFuzzTests {
    /// Random payloads, half of them starting with a real prefix so every branch is reached.
    static func payload(_ rng: inout SeededRandom) -> [UInt8] {
        let prefixes: [[UInt8]] = [
            [], [0x02, 0x15], [0xBE, 0xAC], [0x00], [0x10], [0x20, 0x00], [0x20, 0x01], [0x30], [0x05],
        ]
        let length = Int.random(in: 0...40, using: &rng)
        var bytes = Bool.random(using: &rng) ? prefixes.randomElement(using: &rng)! : []
        for _ in 0..<length { bytes.append(UInt8.random(in: 0...255, using: &rng)) }
        // Bias towards the exact lengths the formats use, where off-by-one bugs live.
        if Int.random(in: 0..<4, using: &rng) == 0 {
            bytes = Array(bytes.prefix([10, 14, 18, 20, 23, 24].randomElement(using: &rng)!))
        }
        return bytes
    }

    @Test func threeHundredThousandRandomPayloadsNeverTrap() {
        var rng = SeededRandom(seed: 0xBEAC_0D)
        var engine = BeaconEngine(configuration: EngineConfiguration(), start: .seconds(0))
        let total = 300_000
        for i in 0..<total {
            let p = Self.payload(&rng)
            let s = Sighting(
                time: .seconds(Int64(i / 1000)), receiver: "hci0", address: "AA",
                rssi: Int.random(in: -127...20, using: &rng),
                manufacturerData: i % 2 == 0
                    ? [
                        ManufacturerDatum(
                            company: [0x004C, 0x0118, 0x0499, 0xFFFF].randomElement(using: &rng)!, payload: p)
                    ]
                    : [],
                serviceData: i % 2 == 1 ? [ServiceDatum(uuid: DecoderTests.eddystone, payload: p)] : [])
            _ = engine.ingest(s)
        }
        // Every advertisement is accounted for exactly once.
        #expect(engine.counters.sightings == total)
        #expect(engine.counters.decode.decoded + engine.counters.decode.totalNonMatches == total)
        #expect(engine.counters.decode.decoded > 1000)
        #expect(engine.counters.decode[.iBeaconLength] > 0 && engine.counters.decode[.eddystoneLength] > 0)
        #expect(engine.counters.decode[.ruuviLength] > 0 && engine.counters.decode[.ruuviFormat] > 0)
    }

    @Test func randomSightingLinesNeverTrap() {
        var rng = SeededRandom(seed: 42)
        let valid =
            #"{"t": 1763805600.125, "receiver": "hci0", "address": "C3:11:22:33:44:55", "rssi": -67, "manufacturer_data": {"76": "0215e2c56db5dffb48d2b060d0f5a71096e000010002c5"}, "service_data": {"0000feaa-0000-1000-8000-00805f9b34fb": "00e7"}}"#
        let bytes = Array(valid.utf8)
        var parsed = 0
        for _ in 0..<50_000 {
            var mutated = bytes
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let i = Int.random(in: 0..<mutated.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: mutated[i] = UInt8.random(in: 0...255, using: &rng)
                case 1: mutated.remove(at: i)
                default: mutated.insert(UInt8.random(in: 0...255, using: &rng), at: i)
                }
            }
            if (try? SightingRecord.parse(line: String(decoding: mutated, as: UTF8.self))) != nil { parsed += 1 }
        }
        // Some mutations stay valid (inside hex digits or names); most are rejected, none trap.
        #expect(parsed > 0 && parsed < 50_000)
    }
}
