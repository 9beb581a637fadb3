/// The one grammar for every id an operator or a client names — clients, regions, receivers,
/// gateways, webhooks — whether it comes from the config, the API or a relay's record: 1 to
/// 64 ASCII letters, digits, `.`, `_` and `-`. Ids end up in event subjects, URLs, file
/// names and log lines, so one that passes here cannot break a line, forge a log entry or
/// carry a space into a subject.
public enum Identifier {
    public static let maxBytes = 64

    /// Why `text` is not an id, or nil when it is.
    public static func problem(_ text: String) -> String? {
        guard !text.isEmpty, text.utf8.count <= maxBytes else {
            return "expected an id of 1 to \(maxBytes) letters, digits, '.', '_' or '-', got \(text.utf8.count) bytes"
        }
        let ok = text.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2E || b == 0x5F
                || b == 0x2D
        }
        return ok ? nil : "expected an id of letters, digits, '.', '_' or '-' (at most \(maxBytes))"
    }
}
