/// Nanoseconds since the Unix epoch: the one time axis for sightings, timers and events.
///
/// The engine never reads a clock. Every instant it sees arrives as a `Timestamp` inside a
/// sighting or an `advance(to:)` call, which is why `beacond replay` produces exactly the
/// events the live daemon produced from the same sightings.
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// Builds a timestamp from float seconds, as sighting records carry them (`"t": 1763805600.125`).
    /// Rounds to the nearest microsecond so that decimal inputs like `.125` land exactly.
    public init?(unixSeconds: Double) {
        guard unixSeconds.isFinite, abs(unixSeconds) < 9.0e9 else { return nil }
        let micros = (unixSeconds * 1_000_000).rounded()
        self.nanoseconds = Int64(micros) * 1_000
    }

    public static func seconds(_ s: Int64) -> Timestamp { Timestamp(nanoseconds: s * 1_000_000_000) }

    public var unixSeconds: Double { Double(nanoseconds) / 1e9 }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    public static func + (lhs: Timestamp, rhs: TimeSpan) -> Timestamp {
        Timestamp(nanoseconds: lhs.nanoseconds &+ rhs.nanoseconds)
    }

    public static func - (lhs: Timestamp, rhs: TimeSpan) -> Timestamp {
        Timestamp(nanoseconds: lhs.nanoseconds &- rhs.nanoseconds)
    }

    public static func - (lhs: Timestamp, rhs: Timestamp) -> TimeSpan {
        TimeSpan(nanoseconds: lhs.nanoseconds &- rhs.nanoseconds)
    }

    public var description: String { RFC3339.format(self) }
}

/// A length of time in nanoseconds. Kept as one `Int64` (not `Swift.Duration`'s 128 bits)
/// because the engine compares spans on every sighting.
public struct TimeSpan: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    public static func milliseconds(_ ms: Int64) -> TimeSpan { TimeSpan(nanoseconds: ms * 1_000_000) }
    public static func seconds(_ s: Int64) -> TimeSpan { TimeSpan(nanoseconds: s * 1_000_000_000) }
    public static func minutes(_ m: Int64) -> TimeSpan { .seconds(m * 60) }
    public static func hours(_ h: Int64) -> TimeSpan { .seconds(h * 3600) }

    public var seconds: Double { Double(nanoseconds) / 1e9 }

    public static func < (lhs: TimeSpan, rhs: TimeSpan) -> Bool { lhs.nanoseconds < rhs.nanoseconds }
    public static func * (lhs: TimeSpan, rhs: Int64) -> TimeSpan { TimeSpan(nanoseconds: lhs.nanoseconds &* rhs) }

    /// Formats the span the way the config writes it (`500ms`, `30s`, `5m`, `2h`, `90s`); an
    /// uneven one to the millisecond in seconds (`165.4s`) or to the microsecond under a
    /// second (`857.689ms`), which the config reads back — never as raw nanoseconds in a log.
    public var description: String {
        let ns = nanoseconds
        if ns % 3_600_000_000_000 == 0, ns != 0 { return "\(ns / 3_600_000_000_000)h" }
        if ns % 60_000_000_000 == 0, ns != 0 { return "\(ns / 60_000_000_000)m" }
        if ns % 1_000_000_000 == 0 { return "\(ns / 1_000_000_000)s" }
        if ns % 1_000_000 == 0 { return "\(ns / 1_000_000)ms" }
        let sign = ns < 0 ? "-" : ""
        let magnitude = ns.magnitude
        if magnitude >= 1_000_000_000 {
            let ms = (magnitude + 500_000) / 1_000_000
            return sign + Self.decimal(ms / 1000, ms % 1000) + "s"
        }
        let us = (magnitude + 500) / 1000
        return sign + Self.decimal(us / 1000, us % 1000) + "ms"
    }

    /// `whole.fraction` with the fraction's three digits, trailing zeros dropped.
    private static func decimal(_ whole: UInt64, _ thousandths: UInt64) -> String {
        guard thousandths > 0 else { return "\(whole)" }
        var digits = String(thousandths)
        while digits.count < 3 { digits = "0" + digits }
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(whole).\(digits)"
    }

    /// Parses `500ms`, `30s`, `1.5s`, `5m`, `2h`, `30d` (and `0`). Returns nil for anything else.
    public init?(parsing text: String) {
        let units: [(String, Double)] = [("ms", 1e6), ("s", 1e9), ("m", 60e9), ("h", 3600e9), ("d", 86_400e9)]
        if text == "0" {
            self.init(nanoseconds: 0)
            return
        }
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            let number = text.dropLast(suffix.count)
            // "5ms" also ends in "s": only accept when what is left is a plain number.
            guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
                number.first != ".", number.last != ".", number.filter({ $0 == "." }).count <= 1,
                let value = Double(number)
            else { continue }
            let ns = value * scale
            guard ns < 9.0e18 else { return nil }
            self.init(nanoseconds: Int64(ns.rounded()))
            return
        }
        return nil
    }
}
