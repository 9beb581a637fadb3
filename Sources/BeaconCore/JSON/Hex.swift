/// Hex text <-> bytes, as sighting records carry advertisement payloads.
public enum Hex {
    @inline(__always)
    public static func nibble(_ c: UInt8) -> UInt8? {
        let value = digit(c)
        return value < 16 ? value : nil
    }

    /// A hex digit's value, or 0xFF for any other byte: for readers that check a run of
    /// digits at once (OR the values, test the high bits) instead of one optional each.
    @inline(__always)
    public static func digit(_ c: UInt8) -> UInt8 {
        let decimal = c &- 0x30
        if decimal < 10 { return decimal }
        let letter = (c | 0x20) &- 0x61
        return letter < 6 ? letter + 10 : 0xFF
    }

    /// `bytes` as lower-case hex digits into `out` (twice as many bytes).
    @inline(__always)
    public static func write(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        let digits: StaticString = "0123456789abcdef"
        for (i, b) in bytes.enumerated() {
            out[2 * i] = digits.utf8Start[Int(b >> 4)]
            out[2 * i + 1] = digits.utf8Start[Int(b & 0xF)]
        }
    }

    /// Decodes an even-length hex string (either case); nil for anything else.
    public static func decode(_ text: String) -> [UInt8]? {
        let utf8 = text.utf8
        guard utf8.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count / 2)
        var high: UInt8? = nil
        for c in utf8 {
            guard let n = nibble(c) else { return nil }
            if let h = high {
                out.append(h << 4 | n)
                high = nil
            } else {
                high = n
            }
        }
        return out
    }

    public static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let array = Array(bytes)
        return String(unsafeUninitializedCapacity: array.count * 2) { out in
            array.withUnsafeBytes { write($0, into: UnsafeMutableRawBufferPointer(out)) }
            return array.count * 2
        }
    }
}
