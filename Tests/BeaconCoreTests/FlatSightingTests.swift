import Testing

@testable import BeaconCore

/// The flat `Sighting` (issue 43): what the readers, the engine and the writers rely on — the
/// address's bits, the interned receiver, the data inline — and that the text forms read and
/// write the same value.
@Suite struct FlatSightingTests {
    static let iBeacon = Hex.decode("0215e2c56db5dffb48d2b060d0f5a71096e000010002c5")!
    static let eddystoneUID = Hex.decode("00e7edd1ebeac04e5defa0170bdb87539b670000")!

    @Test func anAddressIsItsBitsAndReadsBackInUpperCase() {
        var s = Sighting(time: .seconds(1), receiver: "hci0", address: "c3:11:22:33:44:5f", rssi: -60)
        #expect(s.addressValue == 0xC311_2233_445F && s.rare == nil)
        #expect(s.address == "C3:11:22:33:44:5F" && s.bluetoothAddress?.value == 0xC311_2233_445F)
        s.address = "relay-device-7"
        #expect(s.address == "relay-device-7" && s.bluetoothAddress == nil && s.rare != nil)
        // Back to an address of the usual form: the text is gone, not left behind.
        s.address = "D0:5E:00:00:00:01"
        #expect(s.address == "D0:5E:00:00:00:01" && s.rare == nil)
        #expect(Sighting.addressValue(Array("C3:11:22:33:44".utf8)) == nil)
        #expect(Sighting.addressValue(Array("C3-11-22-33-44-55".utf8)) == nil)
        #expect(Sighting.addressValue(Array("G3:11:22:33:44:55".utf8)) == nil)
    }

    @Test func addressTypesOtherThanPublicAndRandomKeepTheirText() {
        var s = Sighting(time: .seconds(1), receiver: "hci0", address: "C3:11:22:33:44:55", rssi: -60)
        #expect(s.addressType == nil && s.addressKind == .unspecified)
        s.addressType = "random"
        #expect(s.addressKind == .random && s.rare == nil)
        s.addressType = "static-random"
        #expect(s.addressKind == .other && s.addressType == "static-random")
        s.addressType = "public"
        #expect(s.addressKind == .public && s.rare == nil)
    }

    @Test func aReceiverIsInternedOnce() {
        let a = Sighting(time: .seconds(1), receiver: "dock-receiver-north-2", address: "C3:11:22:33:44:55", rssi: -60)
        let b = Sighting(time: .seconds(2), receiver: "dock-receiver-north-2", address: "C3:11:22:33:44:56", rssi: -61)
        #expect(a.receiverID == b.receiverID && a.receiverID != .unlisted)
        #expect(ReceiverID("dock-receiver-north-2") == a.receiverID)
        #expect(b.receiver == "dock-receiver-north-2" && a.receiverID.name == "dock-receiver-north-2")
        #expect(ReceiverID("dock-receiver-north-3") != a.receiverID)
    }

    @Test func aLegacyAdvertisementsDataIsHeldInline() {
        let s = Sighting(
            time: .seconds(1), receiver: "hci0", address: "C3:11:22:33:44:55", rssi: -60,
            manufacturerData: [ManufacturerDatum(company: 0x004C, payload: Self.iBeacon)],
            serviceData: [ServiceDatum(uuid: "0000feaa-0000-1000-8000-00805f9b34fb", payload: Self.eddystoneUID)])
        #expect(s.data.isInline)
        #expect(s.manufacturerData == [ManufacturerDatum(company: 0x004C, payload: Self.iBeacon)])
        #expect(s.serviceData.map(\.payload) == [Self.eddystoneUID])
        #expect(MemoryLayout<Sighting>.size <= 160)
    }

    @Test func dataTooLargeForTheValueSpillsAndReadsBackTheSame() {
        let long = (0..<200).map { UInt8($0) }
        let data = [
            ManufacturerDatum(company: 0x0059, payload: long),
            ManufacturerDatum(company: 0x004C, payload: Self.iBeacon),
        ]
        let service = [ServiceDatum(uuid: "0000fe9f-0000-1000-8000-00805f9b34fb", payload: Array(long.prefix(40)))]
        let s = Sighting(
            time: .seconds(1), receiver: "hci0", address: "C3:11:22:33:44:55", rssi: -60, manufacturerData: data,
            serviceData: service)
        #expect(!s.data.isInline)
        #expect(s.manufacturerData == data && s.serviceData == service)
        // The iBeacon after the long entry is still found.
        let id = IBeaconID(uuid: BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 2)
        #expect(BeaconDecoder.decode(s).map(\.identity) == .success(.ibeacon(id)))
    }

    @Test func aPayloadLongerThanAnEntryHoldsIsCutNotOverrun() {
        // D-Bus can carry a 70,000-byte `ay`; an entry's length is 16 bits.
        let huge = (0..<70_000).map { UInt8(truncatingIfNeeded: $0) }
        var data = AdvertisementData()
        huge.withUnsafeBytes { data.appendManufacturer(company: 0x0059, payload: $0) }
        huge.withUnsafeBytes { data.appendService(uuid: "feaa", payload: $0) }
        Self.iBeacon.withUnsafeBytes { data.appendManufacturer(company: 0x004C, payload: $0) }
        #expect(data.manufacturerData.map(\.payload.count) == [65_535, 23])
        #expect(data.manufacturerData.first?.payload == Array(huge.prefix(65_535)))
        #expect(data.serviceData.map(\.payload.count) == [65_535])
        #expect(data.manufacturerData.last?.payload == Self.iBeacon)
    }

    @Test func theSameDataIsTheSameValueWhateverOrderItWasAddedIn() {
        var a = AdvertisementData()
        var b = AdvertisementData()
        Self.eddystoneUID.withUnsafeBytes { a.appendService(uuid: "feaa", payload: $0) }
        Self.iBeacon.withUnsafeBytes { a.appendManufacturer(company: 0x004C, payload: $0) }
        Self.iBeacon.withUnsafeBytes { b.appendManufacturer(company: 0x004C, payload: $0) }
        Self.eddystoneUID.withUnsafeBytes { b.appendService(uuid: "0000FEAA-0000-1000-8000-00805F9B34FB", payload: $0) }
        #expect(a == b)
        #expect(a.manufacturerData.count == 1 && a.serviceData.count == 1)
    }

    @Test func everySpellingOfEddystonesUUIDIsEddystone() {
        for uuid in ["feaa", "0xFEAA", "0000feaa-0000-1000-8000-00805f9b34fb", "0000FEAA-0000-1000-8000-00805F9B34FB"] {
            let result = BeaconDecoder.decode(
                manufacturerData: [], serviceData: [ServiceDatum(uuid: uuid, payload: Self.eddystoneUID)])
            #expect((try? result.get())?.identity != nil, "\(uuid)")
            #expect(ServiceUUID(uuid) == .short(0xFEAA), "\(uuid)")
        }
        // Read back as BlueZ writes it; a key that is no UUID is kept as given.
        var s = Sighting(time: .seconds(1), receiver: "hci0", address: "C3:11:22:33:44:55", rssi: -60)
        s.serviceData = [ServiceDatum(uuid: "0xFEAA", payload: [1]), ServiceDatum(uuid: "not a uuid", payload: [2])]
        #expect(s.serviceData.map(\.uuid) == ["0000feaa-0000-1000-8000-00805f9b34fb", "not a uuid"])
        let long = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
        s.serviceData = [ServiceDatum(uuid: long.uppercased(), payload: [3])]
        #expect(s.serviceData.map(\.uuid) == [long])
    }

    @Test func theLineReaderFillsTheFlatValueAsTheGenericPathDoes() throws {
        let line =
            #"{"t":1763805600.5,"receiver":"hci1","address":"c3:11:22:33:44:55","address_type":"public","rssi":-67,"service_data":{"FEAA":"00e7edd1ebeac04e5defa0170bdb87539b670000"},"manufacturer_data":{"76":"0215e2c56db5dffb48d2b060d0f5a71096e000010002c5"}}"#
        var reader = SightingLineReader()
        let fast = try #require(Array(line.utf8).withUnsafeBytes { reader.sighting(in: $0) })
        let generic = try SightingRecord.parse(line: line)
        #expect(fast == generic)
        #expect(fast.data.isInline && fast.rare == nil && fast.addressKind == .public)
        #expect(fast.address == "C3:11:22:33:44:55" && fast.receiver == "hci1")
        // Written back as the record it was (the address in upper case, the UUID in BlueZ's form).
        let again = try SightingRecord.parse(line: SightingRecord.text(fast))
        #expect(again == fast)
    }
}
