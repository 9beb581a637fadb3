/// Text that came from outside — a proxy's name or refusal, an mDNS record, a receiver's error,
/// an asset's name — made safe to put in front of a person. Why: a device on the LAN needs no
/// credential to announce a name holding terminal escapes or a newline, and an operator who
/// runs `beaconctl doctor` would see a cleared screen or `[OK]` lines the tool did not write.
/// Control characters are written out as the log writes them (`\n`, `\u001b`), so what was
/// sent stays readable; so are the bidirectional overrides that reorder what a line shows.
public enum OutsideText {
    /// One line, at most `limit` characters (then `…`): newlines and tabs written out too.
    public static func line(_ text: String, limit: Int = 200) -> String {
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            guard count < limit else { return out + "…" }
            let shown = written(scalar, keepLines: false)
            out += shown
            count += shown.unicodeScalars.count
        }
        return out
    }

    /// A whole output whose lines are the tool's own: every control character but newline and
    /// tab written out. The last guard before the terminal; values within it use `line`.
    public static func block(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { isHidden($0) && $0 != "\n" && $0 != "\t" }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars { out += written(scalar, keepLines: true) }
        return out
    }

    /// A scalar as it is, or written out.
    private static func written(_ scalar: Unicode.Scalar, keepLines: Bool) -> String {
        switch scalar {
        case "\n": return keepLines ? "\n" : "\\n"
        case "\t": return keepLines ? "\t" : "\\t"
        case "\r": return "\\r"
        case _ where isHidden(scalar):
            let hex = String(scalar.value, radix: 16)
            return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        default: return String(scalar)
        }
    }

    /// C0 and C1 controls, DEL, the line and paragraph separators, and the bidirectional
    /// embeddings, overrides and isolates.
    static func isHidden(_ s: Unicode.Scalar) -> Bool {
        let v = s.value
        return v < 0x20 || (v >= 0x7F && v < 0xA0) || v == 0x2028 || v == 0x2029 || (0x202A...0x202E).contains(v)
            || (0x2066...0x2069).contains(v) || v == 0x200E || v == 0x200F
    }
}
