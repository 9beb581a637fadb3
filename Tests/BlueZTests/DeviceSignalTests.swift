import BeaconCore
import BlueZFixtures
import CDBus
import Testing

@testable import BlueZ

/// The wire parser of the signal stream, against messages that libdbus itself marshals.
@Suite struct DeviceSignalTests {
    static let payload: [UInt8] = [0x02, 0x15] + Array(repeating: 0xAB, count: 16) + [0, 42, 0, 7, 0xC5]

    /// PropertiesChanged with RSSI, ManufacturerData, ServiceData, Name, Paired and UUIDs (skipped).
    static func marshalled(interface: String = "org.bluez.Device1") -> [UInt8] {
        DeviceSignalFixture.wireBytes(
            consuming: DeviceSignalFixture.propertiesChanged(
                path: "/org/bluez/hci0/dev_C3_11_22_33_44_55", interface: interface, rssi: -67,
                manufacturerData: [(0x004C, payload)],
                serviceData: [("0000feaa-0000-1000-8000-00805f9b34fb", [0, 0xE7])],
                name: "tag", paired: true, uuids: ["0000feaa-0000-1000-8000-00805f9b34fb"]))
    }

    @Test func parsesTheSignalBeacondSubscribesTo() throws {
        let bytes = Self.marshalled()
        let signal = try #require(bytes.withUnsafeBytes { DeviceSignal.parse($0) })
        #expect(signal.path == "/org/bluez/hci0/dev_C3_11_22_33_44_55")
        #expect(signal.update.rssi == -67)
        #expect(signal.update.manufacturerData == [ManufacturerDatum(company: 0x004C, payload: Self.payload)])
        #expect(
            signal.update.serviceData == [
                ServiceDatum(uuid: "0000feaa-0000-1000-8000-00805f9b34fb", payload: [0, 0xE7])
            ])
        #expect(signal.update.name == "tag" && signal.update.kept)
        #expect(bytes.withUnsafeBytes { DeviceSignal.messageLength($0) } == bytes.count)
    }

    @Test func otherInterfacesAreNotDeviceSignals() {
        #expect(Self.marshalled(interface: "org.bluez.Adapter1").withUnsafeBytes { DeviceSignal.parse($0) } == nil)
    }

    @Test func everyTruncationAndRandomCorruptionIsSkippedWithoutATrap() {
        let bytes = Self.marshalled()
        for cut in 0..<bytes.count {
            _ = Array(bytes[0..<cut]).withUnsafeBytes { DeviceSignal.parse($0) }
        }
        var state: UInt64 = 42
        for _ in 0..<50_000 {
            var corrupt = bytes
            for _ in 0..<3 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                corrupt[Int(state >> 33) % corrupt.count] = UInt8(truncatingIfNeeded: state >> 17)
            }
            _ = corrupt.withUnsafeBytes { DeviceSignal.parse($0) }
            _ = corrupt.withUnsafeBytes { DeviceSignal.messageLength($0) }
        }
    }
}
