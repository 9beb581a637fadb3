// The byte-level reading `SightingLineReader` does: a position in a line and the few JSON
// forms a sighting record takes, each read without building a value it does not keep.

/// Whether the bytes at `at` are `word`'s (the caller has checked there are as many).
@inline(__always)
func sameBytes(_ at: UnsafeRawPointer, _ word: StaticString) -> Bool {
    let expected = word.utf8Start
    for k in 0..<word.utf8CodeUnitCount where at.load(fromByteOffset: k, as: UInt8.self) != expected[k] {
        return false
    }
    return true
}

/// A position in a line's bytes, and the few JSON forms the reader takes. Every method
/// returns nil (or false) rather than guess, leaving the cursor anywhere: the caller gives up.
struct SightingLineCursor {
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
            let high = Hex.digit(bytes[at])
            let low = Hex.digit(bytes[at + 1])
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
