/// Hex text <-> bytes, as sighting records carry advertisement payloads.
public enum Hex {
    @inline(__always)
    public static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
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
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
