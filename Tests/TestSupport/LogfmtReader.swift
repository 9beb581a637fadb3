/// A strict logfmt reader for tests, written from the format's description (key=value pairs
/// separated by spaces; a value bare, or quoted with JSON's escapes), not from the daemon's
/// renderer: a line the daemon writes must parse here, or the test that reads it fails.
public enum LogfmtReader {
    public struct Malformed: Error, CustomStringConvertible {
        public let line: String
        public let reason: String
        public var description: String { "\(reason): \(line)" }
    }

    /// The line's pairs in order; throws on anything a logfmt parser would not take whole.
    public static func pairs(_ line: String) throws -> [(key: String, value: String)] {
        let s = Array(line.unicodeScalars)
        var i = 0
        var out: [(String, String)] = []
        func fail(_ reason: String) -> Malformed { Malformed(line: line, reason: "\(reason) at \(i)") }
        func isBare(_ c: Unicode.Scalar) -> Bool { c.value > 0x20 && c != "=" && c != "\"" && c.value != 0x7F }
        while i < s.count {
            guard out.isEmpty || s[i] == " " else { throw fail("no space between pairs") }
            while i < s.count, s[i] == " " { i += 1 }
            guard i < s.count else { break }
            var key = ""
            while i < s.count, isBare(s[i]) { key.unicodeScalars.append(s[i]); i += 1 }
            guard !key.isEmpty else { throw fail("empty key") }
            guard i < s.count, s[i] == "=" else { throw fail("key \(key) without =") }
            i += 1
            var value = ""
            if i < s.count, s[i] == "\"" {
                i += 1
                while true {
                    guard i < s.count else { throw fail("unterminated quote") }
                    let c = s[i]
                    i += 1
                    if c == "\"" { break }
                    guard c.value >= 0x20 else { throw fail("raw control character") }
                    guard c == "\\" else { value.unicodeScalars.append(c); continue }
                    guard i < s.count else { throw fail("dangling escape") }
                    let e = s[i]
                    i += 1
                    switch e {
                    case "\"", "\\", "/": value.unicodeScalars.append(e)
                    case "n": value += "\n"
                    case "r": value += "\r"
                    case "t": value += "\t"
                    case "u":
                        guard i + 4 <= s.count,
                            let code = UInt32(String(String.UnicodeScalarView(s[i..<i + 4])), radix: 16),
                            let scalar = Unicode.Scalar(code)
                        else { throw fail("bad \\u escape") }
                        value.unicodeScalars.append(scalar)
                        i += 4
                    default: throw fail("unknown escape \\\(e)")
                    }
                }
                guard i == s.count || s[i] == " " else { throw fail("text after a quoted value") }
            } else {
                while i < s.count, isBare(s[i]) { value.unicodeScalars.append(s[i]); i += 1 }
                guard i == s.count || s[i] == " " else { throw fail("bad character in a bare value") }
            }
            out.append((key, value))
        }
        return out
    }

    /// The line as a dictionary (a key given twice is an error).
    public static func fields(_ line: String) throws -> [String: String] {
        var fields: [String: String] = [:]
        for (key, value) in try pairs(line) {
            guard fields.updateValue(value, forKey: key) == nil else {
                throw Malformed(line: line, reason: "key \(key) twice")
            }
        }
        return fields
    }
}

extension Sequence where Element == String {
    /// The fields of each logfmt line whose `event` is `event` (lines that do not parse are
    /// skipped: `allParse` is the check for that).
    public func logEvents(_ event: String) -> [[String: String]] {
        compactMap { try? LogfmtReader.fields($0) }.filter { $0["event"] == event }
    }

    /// Whether a line has `event` and every given field with the given value.
    public func hasLog(_ event: String, level: String? = nil, _ expected: [String: String] = [:]) -> Bool {
        logEvents(event).contains { fields in
            (level == nil || fields["level"] == level) && expected.allSatisfy { fields[$0.key] == $0.value }
        }
    }
}

extension String {
    /// Whether this logfmt line is `event` (at `level`, if given) with each expected value,
    /// and with each key in `having` present whatever its value.
    public func isLog(
        _ event: String, level: String? = nil, _ expected: [String: String] = [:], having: [String] = []
    ) -> Bool {
        guard let fields = try? LogfmtReader.fields(self), fields["event"] == event else { return false }
        return (level == nil || fields["level"] == level) && expected.allSatisfy { fields[$0.key] == $0.value }
            && having.allSatisfy { fields[$0] != nil }
    }
}
