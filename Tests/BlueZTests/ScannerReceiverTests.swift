import BeaconCore
import Logging
import Synchronization
import Testing

@testable import BlueZ

/// Sightings leave the scanner under the receiver names the site gives its adapters: nothing
/// renames them on the way to the engine (issue 54, the path of one advertisement).
@Suite struct ScannerReceiverTests {
    static let payload: [UInt8] = [0x02, 0x15] + Array(repeating: 0xAB, count: 16) + [0, 42, 0, 7, 0xC5]

    final class Output: Sendable {
        let sightings = Mutex<[Sighting]>([])
    }

    /// A scanner with no bus: its device table fed as the signal stream feeds it.
    static func scanner(names: [String: String], into out: Output) -> BlueZScanner {
        BlueZScanner(
            settings: ScannerSettings(), clock: { .seconds(100) },
            receiverName: { names[$0] ?? "gw1.\($0)" },
            output: { output in
                if case let .sightings(batch) = output { out.sightings.withLock { $0 += batch } }
            }, logger: Logger(label: "test"))
    }

    static func advertisement(rssi: Int) -> DeviceUpdate {
        var update = DeviceUpdate()
        update.rssi = rssi
        update.manufacturerData = [ManufacturerDatum(company: 0x004C, payload: payload)]
        return update
    }

    @Test func eachAdaptersSightingsComeUnderItsReceiversName() {
        let out = Output()
        let scanner = Self.scanner(names: ["hci0": "rx-front"], into: out)
        for (adapter, rssi) in [("hci0", -60), ("hci0", -61), ("hci2", -70), ("hci0", -62)] {
            scanner.deviceChanged(
                path: "/org/bluez/\(adapter)/dev_C3_11_22_33_44_55", update: Self.advertisement(rssi: rssi))
        }
        scanner.flush()
        let sightings = out.sightings.withLock { $0 }
        #expect(sightings.map(\.receiver) == ["rx-front", "rx-front", "gw1.hci2", "rx-front"])
        #expect(sightings.map(\.rssi) == [-60, -61, -70, -62])
        #expect(sightings.allSatisfy { $0.data.manufacturerData.first?.payload == Self.payload })
    }

    @Test func aSignalWithOnlyServiceDataKeepsTheManufacturerDataItHadAndTheOtherWayRound() {
        let out = Output()
        let scanner = Self.scanner(names: [:], into: out)
        let path = "/org/bluez/hci0/dev_C3_11_22_33_44_55"
        scanner.deviceChanged(path: path, update: Self.advertisement(rssi: -60))
        var service = DeviceUpdate()
        service.serviceData = [ServiceDatum(uuid: "0000feaa-0000-1000-8000-00805f9b34fb", payload: [0x10, 0xE7])]
        scanner.deviceChanged(path: path, update: service)
        var manufacturer = DeviceUpdate()
        manufacturer.manufacturerData = [ManufacturerDatum(company: 0x0059, payload: [1, 2])]
        scanner.deviceChanged(path: path, update: manufacturer)
        scanner.flush()
        let data = out.sightings.withLock { $0 }.map(\.data)
        #expect(data.count == 3)
        #expect(data[1].manufacturerData.map(\.company) == [0x004C] && data[1].serviceData.count == 1)
        #expect(data[2].manufacturerData.map(\.company) == [0x0059])
        #expect(data[2].serviceData.map(\.payload) == [[0x10, 0xE7]])
    }
}
