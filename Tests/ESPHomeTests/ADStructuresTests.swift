import BeaconCore
import Testing

@Suite struct ADStructuresTests {
    @Test func anIBeaconsStructuresGiveItsManufacturerData() throws {
        let ad = try ADStructures(
            parsing: [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + Array(repeating: 0xAB, count: 16)
                + [0, 42, 0, 7, 0xC5])
        #expect(
            ad.data.manufacturerData == [
                ManufacturerDatum(
                    company: 0x004C, payload: [0x02, 0x15] + Array(repeating: 0xAB, count: 16) + [0, 42, 0, 7, 0xC5])
            ])
        guard case let .success(.iBeacon(beacon)) = BeaconDecoder.decode(ad.data) else {
            Issue.record("not an iBeacon")
            return
        }
        #expect(beacon.id.major == 42 && beacon.id.minor == 7)
    }

    @Test func serviceDataNameAndTxPowerAreRead() throws {
        let uuid128: [UInt8] = Array(0..<16)
        let ad = try ADStructures(
            parsing: [0x05, 0x16, 0xAA, 0xFE, 0x10, 0xEE]  // Eddystone, 16-bit UUID
                + [0x05, 0x08, 0x53, 0x68, 0x6F, 0x72]  // shortened name "Shor"
                + [0x05, 0x09, 0x54, 0x61, 0x67, 0x31]  // complete name "Tag1"
                + [0x02, 0x0A, 0xF4]  // TX power −12 dBm
                + [0x12, 0x21] + uuid128 + [0x99]  // 128-bit UUID, little-endian on the air
                + [0x06, 0x20, 0x34, 0x12, 0x00, 0x00, 0x77]  // 32-bit UUID 0x00001234
                + [0x00, 0x00])  // padding
        #expect(ad.name == "Tag1")
        #expect(ad.txPower == -12)
        #expect(
            ad.data.serviceData.map { ServiceUUID($0.uuid) } == [
                ServiceUUID("feaa"), ServiceUUID("0f0e0d0c-0b0a-0908-0706-050403020100"), ServiceUUID("1234"),
            ])
        #expect(ad.data.serviceData.map(\.payload) == [[0x10, 0xEE], [0x99], [0x77]])
    }

    @Test func aStructureThatOverrunsIsRefusedWhole() {
        #expect(throws: ADStructures.Problem.overrun(at: 3)) {
            try ADStructures(parsing: [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02])
        }
        #expect(throws: ADStructures.Problem.tooLong(1651)) {
            try ADStructures(parsing: [UInt8](repeating: 1, count: 1651))
        }
    }
}
