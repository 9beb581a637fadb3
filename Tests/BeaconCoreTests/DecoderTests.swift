import Testing

@testable import BeaconCore

/// Real advertisements for every format, and truncated, oversized and wrong-prefix ones.
@Suite struct DecoderTests {
    struct Fixture: CustomTestStringConvertible, Sendable {
        var name: String
        var company: UInt16?
        var serviceUUID: String?
        var hex: String
        var expected: Expected
        var testDescription: String { name }
    }

    enum Expected: Equatable, Sendable {
        case frame(BeaconFrame)
        case nonMatch(NonMatch)
    }

    static let eddystone = "0000feaa-0000-1000-8000-00805f9b34fb"
    static let uuid = BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let radiusUUID = BeaconUUID("2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")!

    static let fixtures: [Fixture] = [
        // iBeacon, as SPEC §1.2's example record carries it (BlueZ strips the company id).
        Fixture(
            name: "iBeacon", company: 0x004C, hex: "0215e2c56db5dffb48d2b060d0f5a71096e000010002c5",
            expected: .frame(.iBeacon(IBeaconFrame(id: IBeaconID(uuid: uuid, major: 1, minor: 2), measuredPower: -59)))),
        Fixture(
            name: "iBeacon max major/minor", company: 0x004C, hex: "0215e2c56db5dffb48d2b060d0f5a71096e0ffffffffb3",
            expected: .frame(
                .iBeacon(IBeaconFrame(id: IBeaconID(uuid: uuid, major: 65535, minor: 65535), measuredPower: -77)))),
        Fixture(
            name: "iBeacon truncated", company: 0x004C, hex: "0215e2c56db5dffb48d2b060d0f5a71096e000010002",
            expected: .nonMatch(.iBeaconLength)),
        Fixture(
            name: "iBeacon oversized", company: 0x004C, hex: "0215e2c56db5dffb48d2b060d0f5a71096e000010002c500",
            expected: .nonMatch(.iBeaconLength)),
        Fixture(
            name: "iBeacon prefix under another company", company: 0x0059,
            hex: "0215e2c56db5dffb48d2b060d0f5a71096e000010002c5", expected: .nonMatch(.notABeacon)),
        Fixture(name: "Apple Nearby Info", company: 0x004C, hex: "1005031c0f3e9a", expected: .nonMatch(.notABeacon)),
        Fixture(name: "Apple, one byte", company: 0x004C, hex: "02", expected: .nonMatch(.notABeacon)),
        Fixture(name: "Apple, empty", company: 0x004C, hex: "", expected: .nonMatch(.notABeacon)),
        // AltBeacon, the specification's example (Radius Networks, 0x0118).
        Fixture(
            name: "AltBeacon", company: 0x0118, hex: "beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c500",
            expected: .frame(
                .altBeacon(
                    AltBeaconFrame(
                        company: 0x0118, id: IBeaconID(uuid: radiusUUID, major: 1, minor: 2), referenceRSSI: -59,
                        manufacturerReserved: 0)))),
        Fixture(
            name: "AltBeacon truncated", company: 0x0118, hex: "beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c5",
            expected: .nonMatch(.altBeaconLength)),
        // Eddystone, the protocol specification's examples.
        Fixture(
            name: "Eddystone-UID", serviceUUID: eddystone, hex: "00e7edd1ebeac04e5defa0170bdb87539b670000",
            expected: .frame(
                .eddystoneUID(
                    EddystoneUIDFrame(
                        id: EddystoneID(
                            namespace: Hex.decode("edd1ebeac04e5defa017")!, instance: Hex.decode("0bdb87539b67")!),
                        txPowerAt0m: -25)))),
        Fixture(
            name: "Eddystone-UID without RFU", serviceUUID: "0000FEAA-0000-1000-8000-00805F9B34FB",
            hex: "00e7edd1ebeac04e5defa0170bdb87539b67",
            expected: .frame(
                .eddystoneUID(
                    EddystoneUIDFrame(
                        id: EddystoneID(
                            namespace: Hex.decode("edd1ebeac04e5defa017")!, instance: Hex.decode("0bdb87539b67")!),
                        txPowerAt0m: -25)))),
        Fixture(
            name: "Eddystone-UID truncated", serviceUUID: eddystone, hex: "00e7edd1ebeac04e5defa0170bdb87539b",
            expected: .nonMatch(.eddystoneLength)),
        Fixture(
            name: "Eddystone-URL", serviceUUID: eddystone, hex: "10e703676f6f676c6507",
            expected: .frame(.eddystoneURL(EddystoneURLFrame(url: "https://google.com", txPowerAt0m: -25)))),
        Fixture(
            name: "Eddystone-URL with expansions", serviceUUID: eddystone, hex: "10f800626561636f6e6400",
            expected: .frame(.eddystoneURL(EddystoneURLFrame(url: "http://www.beacond.com/", txPowerAt0m: -8)))),
        Fixture(
            name: "Eddystone-URL unknown scheme", serviceUUID: eddystone, hex: "10e709676f",
            expected: .nonMatch(.eddystoneURLEncoding)),
        Fixture(
            name: "Eddystone-URL reserved byte", serviceUUID: eddystone, hex: "10e70367ff",
            expected: .nonMatch(.eddystoneURLEncoding)),
        Fixture(
            name: "Eddystone-URL too long", serviceUUID: eddystone, hex: "10e703" + String(repeating: "61", count: 18),
            expected: .nonMatch(.eddystoneLength)),
        Fixture(
            name: "Eddystone-TLM", serviceUUID: eddystone, hex: "20000bb81a800000000a00000064",
            expected: .frame(
                .eddystoneTLM(
                    EddystoneTLMFrame(
                        encrypted: false, batteryMillivolts: 3000, temperatureC: 26.5, advertisementCount: 10,
                        uptimeDeciseconds: 100)))),
        Fixture(
            name: "Eddystone-TLM temperature not supported", serviceUUID: eddystone,
            hex: "2000000080000000000100000002",
            expected: .frame(
                .eddystoneTLM(
                    EddystoneTLMFrame(
                        encrypted: false, batteryMillivolts: nil, temperatureC: nil, advertisementCount: 1,
                        uptimeDeciseconds: 2)))),
        Fixture(
            name: "Eddystone-TLM encrypted", serviceUUID: eddystone, hex: "2001" + String(repeating: "ab", count: 16),
            expected: .frame(.eddystoneTLM(EddystoneTLMFrame(encrypted: true)))),
        Fixture(
            name: "Eddystone-TLM unknown version", serviceUUID: eddystone, hex: "20020bb81a800000000a00000064",
            expected: .nonMatch(.eddystoneFrameType)),
        Fixture(
            name: "Eddystone-TLM truncated", serviceUUID: eddystone, hex: "20000bb8",
            expected: .nonMatch(.eddystoneLength)),
        Fixture(
            name: "Eddystone-EID", serviceUUID: eddystone, hex: "30e70102030405060708",
            expected: .frame(
                .eddystoneEID(EddystoneEIDFrame(ephemeralID: [1, 2, 3, 4, 5, 6, 7, 8], txPowerAt0m: -25)))),
        Fixture(
            name: "Eddystone unknown frame type", serviceUUID: eddystone, hex: "40e7",
            expected: .nonMatch(.eddystoneFrameType)),
        Fixture(name: "Eddystone empty", serviceUUID: eddystone, hex: "", expected: .nonMatch(.eddystoneLength)),
        Fixture(
            name: "Other service data", serviceUUID: "0000fe9f-0000-1000-8000-00805f9b34fb", hex: "00e7",
            expected: .nonMatch(.notABeacon)),
    ]

    @Test(arguments: fixtures)
    func decodes(_ f: Fixture) {
        let payload = Hex.decode(f.hex)!
        let result = BeaconDecoder.decode(
            manufacturerData: f.company.map { [ManufacturerDatum(company: $0, payload: payload)] } ?? [],
            serviceData: f.serviceUUID.map { [ServiceDatum(uuid: $0, payload: payload)] } ?? [])
        switch result {
        case let .success(frame): #expect(Expected.frame(frame) == f.expected)
        case let .failure(e): #expect(Expected.nonMatch(e.reason) == f.expected)
        }
    }

    @Test func noPayloadAtAll() {
        #expect(BeaconDecoder.decode(manufacturerData: [], serviceData: []) == .failure(NonMatchError(.noPayload)))
    }

    @Test func aBeaconAmongOtherManufacturerDataIsFound() {
        let result = BeaconDecoder.decode(
            manufacturerData: [
                ManufacturerDatum(company: 0x0006, payload: [1, 2, 3]),
                ManufacturerDatum(
                    company: 0x004C, payload: Hex.decode("0215e2c56db5dffb48d2b060d0f5a71096e000010002c5")!),
            ], serviceData: [])
        #expect(result.map(\.identity) == .success(.ibeacon(IBeaconID(uuid: Self.uuid, major: 1, minor: 2))))
    }

    @Test func calibrationAt1mPerFormat() {
        let eddy = EddystoneUIDFrame(id: EddystoneID(namespace: [], instance: []), txPowerAt0m: -20)
        #expect(BeaconFrame.eddystoneUID(eddy).rssiAt1m == -61)
        #expect(BeaconFrame.iBeacon(IBeaconFrame(id: Fixture.beaconID, measuredPower: -59)).rssiAt1m == -59)
    }

    @Test func theEngineCountsNonMatches() {
        var engine = BeaconEngine(configuration: EngineConfiguration(), start: .seconds(0))
        _ = engine.ingest(Sighting(time: .seconds(1), receiver: "hci0", address: "A", rssi: -50))
        _ = engine.ingest(
            Sighting(
                time: .seconds(1), receiver: "hci0", address: "A", rssi: -50,
                manufacturerData: [ManufacturerDatum(company: 0x004C, payload: [0x02, 0x15, 0x00])]))
        _ = engine.ingest(
            Sighting(
                time: .seconds(1), receiver: "hci0", address: "A", rssi: -50,
                serviceData: [ServiceDatum(uuid: Self.eddystone, payload: Hex.decode("30e70102030405060708")!)]))
        #expect(engine.counters.decode[.noPayload] == 1)
        #expect(engine.counters.decode[.iBeaconLength] == 1)
        #expect(engine.counters.framesWithoutIdentity == 1)
        #expect(engine.counters.sightings == 3)
    }

    /// SPEC §1.3: packets of an asset's `beacon: {address}` tag are used, not dropped, even
    /// with no beacon frame in them; other addresses' stay counted as dropped.
    @Test func anAssetsAddressTagIsNotCountedAsDropped() {
        let site = SiteConfiguration(
            receivers: [SiteReceiver(id: "hci0", position: Point(x: 0, y: 0), level: 0)],
            assets: [AssetDefinition(id: "badge", tag: .address("AA:00:00:00:00:01"))])
        var engine = BeaconEngine(configuration: EngineConfiguration(site: site), start: .seconds(0))
        _ = engine.ingest(Sighting(time: .seconds(1), receiver: "hci0", address: "AA:00:00:00:00:01", rssi: -50))
        _ = engine.ingest(Sighting(time: .seconds(1), receiver: "hci0", address: "AA:00:00:00:00:01", rssi: -51))
        _ = engine.ingest(Sighting(time: .seconds(1), receiver: "hci0", address: "BB:00:00:00:00:02", rssi: -50))
        #expect(engine.counters.assetTagSightings == 2)
        #expect(engine.counters.decode[.noPayload] == 1)
        #expect(engine.counters.decode.totalNonMatches == 1)
    }
}

extension DecoderTests.Fixture {
    static let beaconID = IBeaconID(uuid: DecoderTests.uuid, major: 1, minor: 2)
}
