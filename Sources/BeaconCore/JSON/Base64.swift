/// Base64 (RFC 4648 §4, with padding), for Standard Webhooks' `whsec_` secrets and
/// signatures. Written out: the core links no Foundation, and this is all of Base64 it needs.
public enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let a = UInt32(bytes[i])
            let b = i + 1 < bytes.count ? UInt32(bytes[i + 1]) : 0
            let c = i + 2 < bytes.count ? UInt32(bytes[i + 2]) : 0
            let n = a << 16 | b << 8 | c
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(i + 1 < bytes.count ? alphabet[Int(n >> 6 & 63)] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? alphabet[Int(n & 63)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of `text`, or nil when it is not Base64 (a wrong character, a wrong length,
    /// padding in the middle). Padding may be left off, as some tools print it.
    public static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        var padding = 0
        for c in text.utf8 {
            if c == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            guard padding == 0, let v = value(c) else { return nil }
            values.append(v)
        }
        guard padding <= 2, values.count % 4 != 1, padding == 0 || (values.count + padding) % 4 == 0 else {
            return nil
        }
        var out: [UInt8] = []
        var i = 0
        while i < values.count {
            let chunk = values[i..<min(i + 4, values.count)]
            var n: UInt32 = 0
            for (j, v) in chunk.enumerated() { n |= UInt32(v) << (18 - 6 * j) }
            out.append(UInt8(n >> 16 & 0xFF))
            if chunk.count > 2 { out.append(UInt8(n >> 8 & 0xFF)) }
            if chunk.count > 3 { out.append(UInt8(n & 0xFF)) }
            i += 4
        }
        return out
    }

    private static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): c - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): c - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
