@_exported import Logging

/// The daemon's one log format: `level=warning event=radios.blind next="no region exits …"`.
///
/// Lines are made from swift-log's message (the event's name) and metadata, never parsed back
/// from text, so a value keeps its spaces all the way to the journal. Standard error gets this
/// logfmt, which log shippers (Loki, Vector, `hl`) read without a custom pattern; a value from
/// outside (a relay's receiver id, an API client's path) is quoted and escaped, so it cannot
/// forge a second line or repaint a terminal.
public enum Logfmt {
    /// The keys in the order a line shows them: the event's own, sorted, then `error` and
    /// `next` last, because a reader's eye goes from what happened to what was wrong to what
    /// to do.
    public static func orderedKeys(_ metadata: Logger.Metadata) -> [String] {
        let trailing = ["error", "next"]
        return metadata.keys.filter { !trailing.contains($0) }.sorted() + trailing.filter { metadata[$0] != nil }
    }

    /// `level=… event=… k=v …`.
    public static func line(level: Logger.Level, event: String, metadata: Logger.Metadata) -> String {
        "level=\(word(level)) " + message(event: event, metadata: metadata)
    }

    /// `event=… k=v …`: the line without its level (the journal's MESSAGE, whose priority
    /// says the level).
    public static func message(event: String, metadata: Logger.Metadata) -> String {
        var text = "event=" + value(event)
        for key in orderedKeys(metadata) {
            // `level` and `event` are the line's own: a metadata key of that name is renamed.
            let name = key == "level" || key == "event" ? key + "_" : key
            text += " " + name + "=" + value(flat(metadata[key]!))
        }
        return text
    }

    /// A metadata value as one string: lists joined by commas, dictionaries as `k:v`.
    public static func flat(_ value: Logger.MetadataValue) -> String {
        switch value {
        case let .string(s): s
        case let .stringConvertible(c): c.description
        case let .array(items): items.map(flat).joined(separator: ",")
        case let .dictionary(d):
            d.sorted { $0.key < $1.key }.map { "\($0.key):\(flat($0.value))" }.joined(separator: ",")
        }
    }

    /// The value as it is when it needs no quotes, quoted with JSON's escapes otherwise.
    public static func value(_ text: String) -> String {
        let needsQuotes =
            text.isEmpty
            || text.unicodeScalars.contains { $0 == " " || $0 == "=" || $0 == "\"" || $0 == "\\" || isControl($0) }
        guard needsQuotes else { return text }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default: append(scalar, to: &out)
            }
        }
        return out + "\""
    }

    /// Control characters written out, nothing else changed: for the journal's fields, where
    /// a value needs no quotes but must not repaint `journalctl -o verbose`.
    public static func escapingControlCharacters(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars { append(scalar, to: &out) }
        return out
    }

    /// A scalar as it is, or a control character written out (`\n`, `\u001b`).
    private static func append(_ scalar: Unicode.Scalar, to out: inout String) {
        switch scalar {
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where isControl(scalar): out += unicodeEscape(scalar)
        default: out.unicodeScalars.append(scalar)
        }
    }

    /// The word a line's `level=` has.
    public static func word(_ level: Logger.Level) -> String {
        switch level {
        case .trace, .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        case .critical: "critical"
        }
    }

    static func isControl(_ s: Unicode.Scalar) -> Bool {
        s.value < 0x20 || (s.value >= 0x7F && s.value < 0xA0) || s.value == 0x2028 || s.value == 0x2029
    }

    private static func unicodeEscape(_ s: Unicode.Scalar) -> String {
        let hex = String(s.value, radix: 16)
        return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
