import Testing

@testable import BeaconCore

/// Issue 27: `SightingLineReader` reads a line from its bytes with no document tree, and must
/// give what the generic path (`JSONParser` + `SightingRecord.parse`) gives: the same
/// sighting, or the same reason. Lines of the common shape must take the fast path (else this
/// would pass by always handing over); every other line is checked against the generic path,
/// including thousands of seeded mutations of good lines.
@Suite struct SightingReaderDifferentialTests {
    static let common = [
        #"{"t":1763805600.125,"receiver":"hci0","address":"C3:11:22:33:44:55","rssi":-67,"manufacturer_data":{"76":"0215e2c56db5dffb48d2b060d0f5a71096e000010002c5"}}"#,
        #"{"t": 1763805600, "receiver": "gw-2.hci1", "address": "C3:11:22:33:44:56", "address_type": "random", "rssi": -90, "tx_power": null, "name": null}"#,
        #" { "rssi" : 20 , "address" : "x" , "receiver" : "r" , "t" : 1.5e9 , "tx_power" : -12 , "name" : "Kühlschrank 3" } "#,
        #"{"t":1763805600.5,"receiver":"hci0","address":"C3:11:22:33:44:55","rssi":-60,"service_data":{"0000feaa-0000-1000-8000-00805f9b34fb":"00E7"},"future":true,"other":null,"n":-0.25e-3,"s":"text"}"#,
        #"{"t":1763805600,"receiver":"hci0","address":"A","rssi":-60,"manufacturer_data":{"76":"","00089":"ff","65535":"0a0B"},"service_data":null}"#,
        #"{"t":-0,"receiver":"r","address":"a","rssi":-127.0}"#,
    ]

    static let refused = [
        #"not json"#, #"[1]"#, #"{"t":"now","receiver":"hci0","address":"A","rssi":-60}"#,
        #"{"t":1,"receiver":"hci0","address":"A","rssi":-60.5}"#, #"{"t":1,"receiver":"hci0","address":"A"}"#,
        #"{"t":1,"receiver":"hc i0","address":"A","rssi":-60}"#, #"{"t":1,"receiver":"","address":"A","rssi":-60}"#,
        #"{"t":1,"receiver":"r","address":"A","rssi":-60,"manufacturer_data":{"65536":"00"}}"#,
        #"{"t":1,"receiver":"r","address":"A","rssi":-60,"manufacturer_data":{"76":"0"}}"#,
        #"{"t":1,"receiver":"r","address":"A","rssi":-60,"manufacturer_data":{"x":"00"}}"#,
        #"{"t":1,"receiver":"r","address":"A","rssi":-60,"tx_power":128}"#,
        #"{"t":1e400,"receiver":"r","address":"A","rssi":-60}"#, #"{"t":01,"receiver":"r","address":"A","rssi":-60}"#,
        #"{"t":1,"receiver":"r","address":"A","rssi":-60}x"#, #"{"t":1,"receiver":"r","address":"A","rssi":-60,}"#,
        #"{"t":1,"t":2,"receiver":"r","address":"A","rssi":-60}"#,
        #"{"t":1,"receiver":"r","address":"A\u0042","rssi":-60}"#,
        #"{"t":1,"receiver":"r","address":"A","rssi":-60,"nested":{"a":[1,{"b":2}]}}"#,
        #"{"t":1,"request":"monitor","receiver":"r","address":"A","rssi":-60}"#,
    ]

    /// Both ways, on the bytes; returns whether the fast path decided alone.
    @discardableResult
    static func agree(_ bytes: [UInt8]) -> Bool {
        var reader = SightingLineReader()
        let alone = bytes.withUnsafeBytes { reader.sighting(in: $0) } != nil
        let fast = Result { () throws(SightingRecordError) in try reader.read(bytes[...]) }
        let generic = Result { () throws(SightingRecordError) in
            try SightingRecord.parse(line: String(decoding: bytes, as: UTF8.self))
        }
        switch (fast, generic) {
        case let (.success(a), .success(b)): #expect(a == b, "\(String(decoding: bytes, as: UTF8.self))")
        case let (.failure(a), .failure(b)): #expect(a == b, "\(String(decoding: bytes, as: UTF8.self))")
        default: Issue.record("\(String(decoding: bytes, as: UTF8.self)): \(fast) vs \(generic)")
        }
        return alone
    }

    @Test func theCommonShapeIsReadAloneWithTheGenericPathsValues() {
        for line in Self.common {
            #expect(Self.agree(Array(line.utf8)), "not read by the fast path: \(line)")
        }
    }

    @Test func whatTheGenericPathRefusesIsRefusedWithTheSameReason() {
        for line in Self.refused { Self.agree(Array(line.utf8)) }
    }

    /// Invalid UTF-8 in a string: the generic path decodes the line first (U+FFFD).
    @Test func invalidUTF8ReadsAsTheGenericPathDecodesIt() {
        var bytes = Array(#"{"t":1,"receiver":"r","address":"A","rssi":-60,"name":"x"}"#.utf8)
        bytes.insert(contentsOf: [0xE2, 0x28, 0xFF], at: bytes.count - 3)
        Self.agree(bytes)
    }

    /// One reader over many lines, as replay uses it (it keeps receivers' ids between lines):
    /// a device heard again gets its new payload and receiver, not its last ones.
    @Test func aDeviceHeardAgainGetsItsNewPayloadNotItsLastOne() throws {
        var reader = SightingLineReader()
        func line(_ address: String, _ payload: String, company: Int = 76, receiver: String = "hci0") -> String {
            #"{"t":1763805600,"receiver":"\#(receiver)","address":"\#(address)","rssi":-60,"manufacturer_data":{"\#(company)":"\#(payload)"}}"#
        }
        let lines = [
            line("C3:11:22:33:44:55", "0215e2c56db5dffb48d2b060d0f5a71096e000010002c5"),
            line("C3:11:22:33:44:55", "0215e2c56db5dffb48d2b060d0f5a71096e000010002c5", receiver: "hci1"),
            line("C3:11:22:33:44:55", "0215e2c56db5dffb48d2b060d0f5a71096e000010003c5"),
            line("C3:11:22:33:44:55", "0215e2c56db5dffb48d2b060d0f5a71096e000010003c5", company: 280),
            line("c3:11:22:33:44:55", "0215e2c56db5dffb48d2b060d0f5a71096e000010003c5"),
            line("C3:11:22:33:44:55", "0215E2C56DB5DFFB48D2B060D0F5A71096E000010003C5"),
            line("C3:11:22:33:44:55", ""),
            #"{"t":1763805600,"receiver":"hci0","address":"C3:11:22:33:44:55","rssi":-60}"#,
        ]
        for round in 0..<2 {
            for text in lines + lines.reversed() {
                let bytes = Array(text.utf8)
                let fast = try reader.read(bytes[...])
                #expect(fast == (try SightingRecord.parse(line: text)), "round \(round): \(text)")
            }
        }
        // Many devices and receivers: each read as the generic path reads it.
        for n in 0..<40_000 {
            let minor = String(n / 7, radix: 16)
            let payload =
                "0215e2c56db5dffb48d2b060d0f5a71096e0" + String(repeating: "0", count: 8 - minor.count) + minor + "c5"
            let text = line(String(format6: n), payload, receiver: "r\(n % 11)")
            #expect(try reader.read(Array(text.utf8)[...]) == (try SightingRecord.parse(line: text)))
        }
    }

    @Test func seededMutationsOfGoodLinesAgree() {
        var random = SplitMix(seed: 27)
        let alphabet = Array(#"{}[]":,. -+eE0123456789tfnul\"aA\#u{80}"#.utf8) + [0x00, 0x0A, 0xC3, 0xFF]
        var fast = 0
        for round in 0..<20_000 {
            var bytes = Array(Self.common[round % Self.common.count].utf8)
            for _ in 0...(random.next() % 3) {
                let at = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 3 {
                case 0: bytes[at] = alphabet[Int(random.next() % UInt64(alphabet.count))]
                case 1: bytes.remove(at: at)
                default: bytes.insert(alphabet[Int(random.next() % UInt64(alphabet.count))], at: at)
                }
                if bytes.isEmpty { bytes = [0x7B] }
            }
            if Self.agree(bytes) { fast += 1 }
        }
        #expect(fast > 1_000, "mutations that stay well-formed still take the fast path: \(fast)")
    }

    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}

extension String {
    /// "00:00:00:01:23:45"-like: a MAC-shaped address from a number.
    init(format6 n: Int) {
        let hex = Array("0123456789ABCDEF")
        var parts: [String] = []
        for shift in stride(from: 40, through: 0, by: -8) {
            let byte = (n >> shift) & 0xFF
            parts.append(String([hex[byte >> 4], hex[byte & 0xF]]))
        }
        self = parts.joined(separator: ":")
    }
}
