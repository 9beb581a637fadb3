import Simulation
import Testing

@testable import BeaconCore

/// The engine's beacon table (`BeaconSlotTable`) against `Dictionary`: the same answers
/// through inserts, removals (which shift entries back) and growth.
@Suite struct BeaconSlotTableTests {
    @Test func agreesWithADictionaryThroughInsertsRemovalsAndGrowth() {
        var table = BeaconSlotTable(capacity: 4)
        var reference: [BeaconIdentity: Int32] = [:]
        // The records the table's slots point at, as the engine's.
        var records: [BeaconRecord?] = []
        var random = SeededRandom(seed: 43)
        let uuid = BeaconUUID(high: 0xE2C5_6DB5_DFFB_48D2, low: 0xB060_D0F5_A710_96E0)
        func identity(_ n: Int) -> BeaconIdentity {
            n % 3 == 0
                ? .eddystone(
                    EddystoneID(
                        namespace: Array(repeating: UInt8(n & 0xFF), count: 10),
                        instance: [0, 0, 0, 0, 0, UInt8(n & 0xFF)]))
                : .ibeacon(IBeaconID(uuid: uuid, major: UInt16(n >> 8), minor: UInt16(n & 0xFF)))
        }
        for step in 0..<20_000 {
            let n = Int(random.next() % 600)
            let id = identity(n)
            if let slot = reference[id], random.next() % 3 == 0 {
                table.remove(BeaconKey(id), in: records)
                records[Int(slot)] = nil
                reference[id] = nil
            } else if reference[id] == nil {
                records.append(BeaconRecord(identity: id, lastSeen: .seconds(Int64(step))))
                table.insert(BeaconKey(id), slot: Int32(records.count - 1), in: records)
                reference[id] = Int32(records.count - 1)
            }
            #expect(table.find(BeaconKey(id), in: records) == reference[id])
        }
        #expect(table.count == reference.count)
        for n in 0..<600 {
            #expect(table.find(BeaconKey(identity(n)), in: records) == reference[identity(n)], "\(n)")
        }
    }

    @Test func anEddystoneIdentityIsNeverAnIBeacons() {
        let eddystone = BeaconIdentity.eddystone(
            EddystoneID(namespace: Array(repeating: 0, count: 10), instance: Array(repeating: 0, count: 6)))
        let iBeacon = BeaconIdentity.ibeacon(IBeaconID(uuid: BeaconUUID(high: 0, low: 0), major: 0, minor: 0))
        #expect(BeaconKey(eddystone) != BeaconKey(iBeacon))
    }
}
