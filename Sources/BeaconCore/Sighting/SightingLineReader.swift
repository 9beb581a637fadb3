/// Reads sighting records (SPEC §1.2) straight from a line's bytes: no document tree, no
/// `String` per key, hex payloads decoded into bytes as they are read.
///
/// Why: replay, `POST /v1/sightings` and a site's batches carry millions of these lines, and
/// the generic path (`JSONParser` then `SightingRecord.parse`) spends most of its time building
/// values that are thrown away at once. This reader knows the record's keys and takes the
/// common shape only: plain strings, numbers, the two payload objects, and unknown keys whose
/// values are scalars. Anything else — an escape in a string, a nested unknown value, a key
/// given twice, any error at all — is handed to the generic path, which decides.
/// So a line is accepted with the same values, or refused with the same reason, either way
/// (`SightingReaderDifferentialTests`, the `sightings-reader` fuzz target).
public struct SightingLineReader {
    /// Receiver ids read lately (valid ones), reused while they repeat.
    private var receivers: [(bytes: [UInt8], id: ReceiverID)] = []
    static let receiversKept = 8

    public init() {}

    /// The record on `line` (surrounding whitespace allowed), or the reason it is refused.
    public mutating func read(_ line: UnsafeRawBufferPointer) throws(SightingRecordError) -> Sighting {
        if let sighting = sighting(in: line) { return sighting }
        return try SightingRecord.parse(line: String(decoding: line, as: UTF8.self))
    }

    /// The same, for bytes in an array.
    public mutating func read(_ line: ArraySlice<UInt8>) throws(SightingRecordError) -> Sighting {
        if let sighting = line.withUnsafeBytes({ self.sighting(in: $0) }) { return sighting }
        return try SightingRecord.parse(line: String(decoding: line, as: UTF8.self))
    }

    /// The record on `line` when it has the common shape; nil whenever the generic path must
    /// decide (then it is `SightingRecord.parse(line:)` or, for a trace, `TraceRecord.parse`).
    public mutating func sighting(in line: UnsafeRawBufferPointer) -> Sighting? {
        guard line.count <= SightingRecord.maxLineBytes else { return nil }
        var c = Cursor(bytes: line)
        c.skipSpace()
        guard c.take(UInt8(ascii: "{")) else { return nil }
        var seen: UInt16 = 0
        var t: Double?, rssi: Double?, txPower: Double?
        var receiver: ReceiverID?, addressRange: Range<Int>?, addressTypeRange: Range<Int>?, name: String?
        // Payloads decoded as they are read, straight into the sighting's data (dropped with
        // it when the line turns out to need the generic path); the rest is set at the end.
        var sighting = Sighting(time: Timestamp(nanoseconds: 0), receiver: .unlisted, address: 0, rssi: 0)
        c.skipSpace()
        if !c.take(UInt8(ascii: "}")) {
            while true {
                c.skipSpace()
                guard let key = c.plainString() else { return nil }
                c.skipSpace()
                guard c.take(UInt8(ascii: ":")) else { return nil }
                c.skipSpace()
                let known = Key(key, in: line)
                if let known {
                    // A key given twice: the generic path takes the last; let it decide.
                    guard seen & known.bit == 0 else { return nil }
                    seen |= known.bit
                }
                switch known {
                case .t?: guard let n = c.number() else { return nil }; t = n
                case .rssi?: guard let n = c.number() else { return nil }; rssi = n
                case .txPower?:
                    if !c.null() {
                        guard let n = c.number() else { return nil }
                        txPower = n
                    }
                case .receiver?:
                    guard let range = c.plainString(), let id = receiverID(line, range) else { return nil }
                    receiver = id
                case .address?:
                    guard let range = c.plainString() else { return nil }
                    addressRange = range
                case .addressType?:
                    if !c.null() {
                        guard let range = c.plainString() else { return nil }
                        addressTypeRange = range
                    }
                case .name?:
                    if !c.null() {
                        guard let range = c.plainString() else { return nil }
                        name = c.text(range)
                    }
                case .manufacturerData?:
                    if !c.null() {
                        guard
                            c.payloads(
                                companyKeys: true,
                                { _, company, hex in
                                    var valid = true
                                    sighting.data.appendManufacturer(company: UInt16(company), count: hex.count / 2) {
                                        valid = Cursor.decodeHex(line, hex, into: $0)
                                    }
                                    return valid
                                })
                        else { return nil }
                    }
                case .serviceData?:
                    if !c.null() {
                        guard
                            c.payloads(
                                companyKeys: false,
                                { key, _, hex in
                                    var valid = true
                                    sighting.data.appendService(
                                        uuid: UnsafeRawBufferPointer(rebasing: line[key]), count: hex.count / 2
                                    ) { valid = Cursor.decodeHex(line, hex, into: $0) }
                                    return valid
                                })
                        else { return nil }
                    }
                case nil:
                    // `request` makes the line a trace request, not a sighting.
                    guard !c.equals(key, "request"), c.skipScalar() else { return nil }
                }
                c.skipSpace()
                if c.take(UInt8(ascii: ",")) { continue }
                guard c.take(UInt8(ascii: "}")) else { return nil }
                break
            }
        }
        c.skipSpace()
        guard c.atEnd else { return nil }
        // The generic path measures the line once decoded, when an invalid byte takes three.
        if c.sawNonASCII, line.count > SightingRecord.maxLineBytes / 3 { return nil }
        // The checks `SightingRecord.parse` makes; a line failing one goes there for its reason.
        guard let t, let time = Timestamp(unixSeconds: t), let receiver, let addressRange, !addressRange.isEmpty,
            let rssi, rssi == rssi.rounded(), rssi >= -127, rssi <= 20
        else { return nil }
        if let txPower, !(txPower == txPower.rounded() && txPower >= -127 && txPower <= 127) { return nil }
        sighting.time = time
        sighting.receiverID = receiver
        sighting.rssi = Int(rssi)
        sighting.txPower = txPower.map { Int($0) }
        sighting.name = name
        let addressBytes = UnsafeRawBufferPointer(rebasing: line[addressRange])
        if let value = Sighting.addressValue(addressBytes) {
            sighting.addressValue = value
        } else {
            sighting.address = c.text(addressRange)
        }
        if let addressTypeRange {
            if c.equals(addressTypeRange, "random") {
                sighting.addressKind = .random
            } else if c.equals(addressTypeRange, "public") {
                sighting.addressKind = .public
            } else {
                sighting.addressType = c.text(addressTypeRange)
            }
        }
        return sighting
    }

    /// The receiver's id when its name is a valid id (`Identifier`), reused from an earlier
    /// line when its bytes are the same: a trace or a batch has a few receivers, over and over.
    private mutating func receiverID(_ line: UnsafeRawBufferPointer, _ range: Range<Int>) -> ReceiverID? {
        let bytes = UnsafeRawBufferPointer(rebasing: line[range])
        for known in receivers where known.bytes.count == bytes.count {
            let same = known.bytes.withUnsafeBytes { kept in
                var k = 0
                while k < kept.count, kept[k] == bytes[k] { k += 1 }
                return k == kept.count
            }
            if same { return known.id }
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard Identifier.problem(text) == nil, let id = ReceiverID(text) else { return nil }
        if receivers.count == Self.receiversKept { receivers.removeFirst() }
        receivers.append((Array(bytes), id))
        return id
    }

    /// The record's keys, each a bit of `seen`.
    private enum Key: UInt16 {
        case t = 1, receiver = 2, address = 4, addressType = 8, rssi = 16, txPower = 32, name = 64
        case manufacturerData = 128, serviceData = 256

        var bit: UInt16 { rawValue }

        /// By length and first byte, then the rest compared at once.
        init?(_ range: Range<Int>, in line: UnsafeRawBufferPointer) {
            let key = UnsafeRawBufferPointer(rebasing: line[range])
            func named(_ word: StaticString) -> Bool {
                sameBytes(key.baseAddress!, word)
            }
            guard let first = key.first else { return nil }
            switch (key.count, first) {
            case (1, UInt8(ascii: "t")): self = .t
            case (4, UInt8(ascii: "r")) where named("rssi"): self = .rssi
            case (4, UInt8(ascii: "n")) where named("name"): self = .name
            case (7, UInt8(ascii: "a")) where named("address"): self = .address
            case (8, UInt8(ascii: "r")) where named("receiver"): self = .receiver
            case (8, UInt8(ascii: "t")) where named("tx_power"): self = .txPower
            case (12, UInt8(ascii: "a")) where named("address_type"): self = .addressType
            case (12, UInt8(ascii: "s")) where named("service_data"): self = .serviceData
            case (17, UInt8(ascii: "m")) where named("manufacturer_data"): self = .manufacturerData
            default: return nil
            }
        }
    }
}

/// Whether the bytes at `at` are `word`'s (the caller has checked there are as many).
@inline(__always)
private func sameBytes(_ at: UnsafeRawPointer, _ word: StaticString) -> Bool {
    let expected = word.utf8Start
    for k in 0..<word.utf8CodeUnitCount where at.load(fromByteOffset: k, as: UInt8.self) != expected[k] {
        return false
    }
    return true
}

/// A position in a line's bytes, and the few JSON forms the reader takes. Every method
/// returns nil (or false) rather than guess, leaving the cursor anywhere: the caller gives up.
private struct Cursor {
    let bytes: UnsafeRawBufferPointer
    var i = 0
    /// A byte of 0x80 or above was in a string.
    var sawNonASCII = false

    var atEnd: Bool { i == bytes.count }

    mutating func skipSpace() {
        while i < bytes.count {
            let b = bytes[i]
            guard b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D else { return }
            i += 1
        }
    }

    mutating func take(_ byte: UInt8) -> Bool {
        guard i < bytes.count, bytes[i] == byte else { return false }
        i += 1
        return true
    }

    /// `null`, taken if it is there.
    mutating func null() -> Bool {
        guard i + 4 <= bytes.count, bytes[i] == UInt8(ascii: "n"), bytes[i + 1] == UInt8(ascii: "u"),
            bytes[i + 2] == UInt8(ascii: "l"), bytes[i + 3] == UInt8(ascii: "l")
        else { return false }
        i += 4
        return true
    }

    /// A string without escapes or control characters: the range of its contents.
    mutating func plainString() -> Range<Int>? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = i
        // Eight bytes at a time while none is a quote, a backslash, a control character or
        // above 0x7F (SWAR: a byte's high bit marks each).
        let base = bytes.baseAddress!
        while i + 8 <= bytes.count {
            let w = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            func zeroByte(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
            let special = zeroByte(w ^ (ones &* 0x22)) | zeroByte(w ^ (ones &* 0x5C)) | ((w &- ones &* 0x20) & ~w) | w
            guard special & highs == 0 else { break }
            i += 8
        }
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                i += 1
                return start..<(i - 1)
            }
            guard b >= 0x20, b != UInt8(ascii: "\\") else { return nil }
            if b >= 0x80 { sawNonASCII = true }
            i += 1
        }
        return nil
    }

    func equals(_ range: Range<Int>, _ word: StaticString) -> Bool {
        range.count == word.utf8CodeUnitCount && sameBytes(bytes.baseAddress! + range.lowerBound, word)
    }

    /// A string's contents as text. The generic path decodes the whole line the same way
    /// first (`String(decoding:)`, invalid bytes becoming U+FFFD); a string's bounds are ASCII
    /// quotes, so decoding it alone gives the same text.
    func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// A JSON number, exactly as `JSONParser` reads it (its grammar, `Double(String)`).
    mutating func number() -> Double? {
        let start = i
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
        let digitsStart = i
        var integer: Int64 = 0
        while i < bytes.count, bytes[i] &- 0x30 < 10 {
            integer = integer &* 10 &+ Int64(bytes[i] &- 0x30)
            i += 1
        }
        let digits = i - digitsStart
        guard digits > 0, !(bytes[digitsStart] == UInt8(ascii: "0") && digits > 1) else { return nil }
        var plain = true
        var fractionDigits = 0
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            plain = false
            i += 1
            let fraction = i
            while i < bytes.count, bytes[i] &- 0x30 < 10 {
                integer = integer &* 10 &+ Int64(bytes[i] &- 0x30)
                i += 1
            }
            fractionDigits = i - fraction
            guard fractionDigits > 0 else { return nil }
        }
        var exponent = false
        if i < bytes.count, bytes[i] | 0x20 == UInt8(ascii: "e") {
            exponent = true
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            let exponent = i
            while i < bytes.count, bytes[i] &- 0x30 < 10 { i += 1 }
            guard i > exponent else { return nil }
        }
        // Up to 15 digits in all, the digits are an exact Double and so is 10^fraction (up to
        // 10^22): one division, correctly rounded, gives what `Double(String)` (strtod) gives.
        if !exponent, digits + fractionDigits <= 15 {
            var value = Double(integer)
            if !plain { value /= Self.powersOfTen[fractionDigits] }
            return bytes[start] == UInt8(ascii: "-") ? -value : value
        }
        guard let value = Double(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)),
            value.isFinite
        else { return nil }
        return value
    }

    /// The bytes of an even number of hex digits written into `out` (`hex.count / 2`), in one
    /// pass; false when one is no hex digit.
    @inline(__always)
    static func decodeHex(_ bytes: UnsafeRawBufferPointer, _ hex: Range<Int>, into out: UnsafeMutableRawBufferPointer)
        -> Bool
    {
        var at = hex.lowerBound
        var bad: UInt8 = 0
        for n in 0..<min(hex.count / 2, out.count) {
            let high = Sighting.nibble(bytes[at])
            let low = Sighting.nibble(bytes[at + 1])
            bad |= high | low
            out[n] = high << 4 | low & 0xF
            at += 2
        }
        return bad & 0xF0 == 0
    }

    static let powersOfTen: [Double] = (0...22).map { n in (0..<n).reduce(1.0) { r, _ in r * 10 } }

    /// An unknown key's value, when it is a scalar: a plain string, a number,
    /// `true`, `false` or `null`. Objects and arrays are left to the generic path.
    mutating func skipScalar() -> Bool {
        guard i < bytes.count else { return false }
        switch bytes[i] {
        case UInt8(ascii: "\""): return plainString() != nil
        case UInt8(ascii: "t"): return word("true")
        case UInt8(ascii: "f"): return word("false")
        case UInt8(ascii: "n"): return null()
        default: return number() != nil
        }
    }

    private mutating func word(_ w: StaticString) -> Bool {
        guard i + w.utf8CodeUnitCount <= bytes.count, equals(i..<(i + w.utf8CodeUnitCount), w) else { return false }
        i += w.utf8CodeUnitCount
        return true
    }

    /// `{"76": "0215…", …}`: each key (a company id 0…65535 in decimal digits when
    /// `companyKeys`, else any plain string) with its hex payload, in order.
    /// `each` gets the key's range, its company id (0 unless `companyKeys`) and the range of
    /// the payload's hex digits (an even number of them), and says whether they were hex.
    mutating func payloads(companyKeys: Bool, _ each: (Range<Int>, Int, Range<Int>) -> Bool) -> Bool {
        guard take(UInt8(ascii: "{")) else { return false }
        skipSpace()
        if take(UInt8(ascii: "}")) { return true }
        while true {
            skipSpace()
            guard let range = plainString() else { return false }
            var key = 0
            if companyKeys {
                // `UInt16(String)` in the generic path takes these and only these.
                guard !range.isEmpty, range.count <= 5 else { return false }
                for index in range {
                    let digit = bytes[index] &- 0x30
                    guard digit < 10 else { return false }
                    key = key * 10 + Int(digit)
                }
                guard key <= 65_535 else { return false }
            }
            skipSpace()
            guard take(UInt8(ascii: ":")) else { return false }
            skipSpace()
            guard let hex = plainString(), hex.count % 2 == 0, each(range, key, hex) else { return false }
            skipSpace()
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "}"))
        }
    }
}
