import Testing

@testable import BeaconCore

/// SPEC §1.2 sighting records: the example parses; every broken field has a specific reason.
@Suite struct SightingRecordTests {
    @Test func theSpecExampleParses() throws {
        let line =
            #"{"t": 1763805600.125, "receiver": "hci0", "address": "C3:11:22:33:44:55", "address_type": "random", "rssi": -67, "tx_power": null, "name": null, "manufacturer_data": {"76": "0215e2c56db5dffb48d2b060d0f5a71096e000010002c5"}, "service_data": {"0000feaa-0000-1000-8000-00805f9b34fb": "00e7"}, "future_key": [1, 2]}"#
        let s = try SightingRecord.parse(line: line)
        #expect(s.time == Timestamp(nanoseconds: 1_763_805_600_125_000_000))
        #expect(s.receiver == "hci0" && s.address == "C3:11:22:33:44:55" && s.addressType == "random")
        #expect(s.rssi == -67 && s.txPower == nil && s.name == nil)
        #expect(
            s.manufacturerData == [
                ManufacturerDatum(company: 76, payload: Hex.decode("0215e2c56db5dffb48d2b060d0f5a71096e000010002c5")!)
            ])
        #expect(s.serviceData == [ServiceDatum(uuid: "0000feaa-0000-1000-8000-00805f9b34fb", payload: [0x00, 0xE7])])
    }

    @Test func aRecordRoundTrips() throws {
        let s = Fixture.sighting(1.25)
        #expect(try SightingRecord.parse(line: SightingRecord.text(s)) == s)
    }

    @Test(arguments: [
        (#"not json"#, "invalid JSON at byte 2: invalid literal, expected null"),
        (#"[1]"#, "expected a JSON object"),
        (#"{"receiver":"hci0","address":"A","rssi":-60}"#, #"missing "t" (seconds since the Unix epoch)"#),
        (
            #"{"t":"now","receiver":"hci0","address":"A","rssi":-60}"#,
            #""t" must be a number of seconds since the Unix epoch"#
        ),
        (#"{"t":1,"address":"A","rssi":-60}"#, #"missing or non-string "receiver""#),
        (#"{"t":1,"receiver":"hci0","address":"A"}"#, #"missing or non-numeric "rssi""#),
        (
            #"{"t":1,"receiver":"hci0","address":"A","rssi":-60.5}"#,
            #""rssi" must be an integer dBm between -127 and 20, got -60.5"#
        ),
        (
            #"{"t":1,"receiver":"hci0","address":"A","rssi":-60,"manufacturer_data":{"apple":"00"}}"#,
            #"manufacturer_data key "apple" is not a company id 0...65535 in decimal"#
        ),
        (
            #"{"t":1,"receiver":"hci0","address":"A","rssi":-60,"manufacturer_data":{"76":"0g"}}"#,
            #"manufacturer_data["76"] is not an even-length hex string"#
        ),
        (
            #"{"t":1,"receiver":"hci0","address":"A","rssi":-60,"service_data":{"feaa":"abc"}}"#,
            #"service_data["feaa"] is not an even-length hex string"#
        ),
        (
            #"{"t":1,"receiver":"hci0","address":"A","rssi":-60,"tx_power":"high"}"#,
            #""tx_power" must be an integer in -127...127 or null"#
        ),
        (#"{"t":1,"receiver":"hci0","address":"A","rssi":-60"#, "invalid JSON at byte 50: unterminated object"),
    ])
    func brokenRecordsSayWhy(line: String, reason: String) {
        #expect(throws: SightingRecordError(reason)) { try SightingRecord.parse(line: line) }
    }

    @Test func overlongLinesAreRejectedBeforeParsing() {
        let line = "{\"pad\":\"" + String(repeating: "a", count: 70_000) + "\"}"
        #expect(throws: SightingRecordError("line longer than 65536 bytes")) { try SightingRecord.parse(line: line) }
    }

    @Test func deeplyNestedJSONIsRefused() {
        let line = String(repeating: "[", count: 10_000)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(line) }
    }

    @Test func jsonStringsWithEscapesAndUnicode() throws {
        let v = try JSONParser.parse(#"{"a":"\u00e9\ud83d\ude00\n\"x\"","b":[true,false,null,-1.5e2]}"#)
        #expect(v["a"] == .string("é😀\n\"x\""))
        #expect(v["b"] == .array([.bool(true), .bool(false), .null, .number(-150)]))
        #expect(v.serialized == #"{"a":"é😀\n\"x\"","b":[true,false,null,-150]}"#)
    }

    @Test(arguments: [
        ("500ms", Int64(500_000_000)), ("30s", 30_000_000_000), ("1.5s", 1_500_000_000), ("5m", 300_000_000_000),
        ("2h", 7_200_000_000_000), ("30d", 2_592_000_000_000_000),
    ])
    func durations(text: String, ns: Int64) {
        #expect(TimeSpan(parsing: text)?.nanoseconds == ns)
    }

    @Test(arguments: ["thirty", "30", "-5s", "5 s", "s", "1.s", ".5s", "5w", "d", ""])
    func badDurations(text: String) {
        #expect(TimeSpan(parsing: text) == nil)
    }
}
