import BeaconCore

/// How the API writes and reads the values its shapes are made of, in one place: integers as
/// JSON numbers, times as RFC 3339 text, rounded figures.
extension JSONValue {
    public static func int(_ n: Int) -> JSONValue { .number(Double(n)) }
    public static func time(_ t: Timestamp?) -> JSONValue { t.map { .string(RFC3339.format($0)) } ?? .null }
    public static func round(_ v: Double?, places: Double = 100) -> JSONValue {
        v.map { .number(($0 * places).rounded() / places) } ?? .null
    }
    public static func optional(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }

    /// An integer member, 0 when absent (a field an older daemon did not send).
    public func int(_ key: String) -> Int { Int(self[key]?.numberValue ?? 0) }
    public func double(_ key: String) -> Double? { self[key]?.numberValue }
    public func string(_ key: String) -> String? { self[key]?.stringValue }
    public func bool(_ key: String) -> Bool {
        if case .bool(true)? = self[key] { return true }
        return false
    }
    /// A time member as the daemon wrote it (RFC 3339), for display.
    public func timeText(_ key: String) -> String? { self[key]?.stringValue }
    public func array(_ key: String) -> [JSONValue] {
        if case let .array(items)? = self[key] { return items }
        return []
    }
}
