/// RFC 3339 timestamps in UTC with millisecond precision (`2025-11-22T10:00:00.125Z`), as
/// CloudEvents' `time` attribute carries them. Written by hand so the core needs no Foundation.
public enum RFC3339 {
    public static func format(_ t: Timestamp) -> String {
        let ms = floorDiv(t.nanoseconds, 1_000_000)
        let days = floorDiv(ms, 86_400_000)
        let msOfDay = ms - days * 86_400_000
        let (y, m, d) = civil(fromDays: days)
        let hour = msOfDay / 3_600_000
        let minute = (msOfDay / 60_000) % 60
        let second = (msOfDay / 1000) % 60
        let milli = msOfDay % 1000
        return
            "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(milli, 3))Z"
    }

    /// The times a text from outside may name: 1970-01-01 up to (not including) 2200-01-01.
    /// Why bounded: a `Timestamp` holds nanoseconds in 64 bits (years 1677 to 2262), and what
    /// is asked for is then widened to whole days and stepped through; a century and more of
    /// margin on both sides keeps that arithmetic from overflowing, and no gateway has events
    /// from outside these years.
    public static let supported = Timestamp(nanoseconds: 0)..<Timestamp(nanoseconds: 7_258_118_400 * 1_000_000_000)

    /// What a refused time is told: the range in words.
    public static let supportedText = "from 1970-01-01T00:00:00Z up to 2200-01-01T00:00:00Z"

    /// The time an RFC 3339 text names (`2025-11-22T10:00:00Z`, with a fraction of a second
    /// or an offset such as `+01:00`), or nil when it is not one or lies outside `supported`.
    public static func parse(_ text: String) -> Timestamp? {
        let b = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int64? {
            guard from + count <= b.count else { return nil }
            var v: Int64 = 0
            for c in b[from..<from + count] {
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int64(c - 48)
            }
            return v
        }
        func at(_ i: Int, _ c: Character) -> Bool { i < b.count && b[i] == c.asciiValue! }
        guard b.count >= 20, let y = number(0, 4), at(4, "-"), let m = number(5, 2), at(7, "-"), let d = number(8, 2),
            at(10, "T") || at(10, "t") || at(10, " "), let hh = number(11, 2), at(13, ":"), let mm = number(14, 2),
            at(16, ":"), let ss = number(17, 2), (1...12).contains(m), (1...31).contains(d), hh < 24, mm < 60, ss < 61
        else { return nil }
        var i = 19
        var nanos: Int64 = 0
        if at(i, ".") {
            i += 1
            var scale: Int64 = 100_000_000
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                nanos += Int64(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        var offset: Int64 = 0
        if at(i, "Z") || at(i, "z") {
            i += 1
        } else if at(i, "+") || at(i, "-"), let oh = number(i + 1, 2), at(i + 3, ":"), let om = number(i + 4, 2),
            oh < 24, om < 60
        {
            offset = (oh * 60 + om) * 60 * (at(i, "-") ? -1 : 1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        // Four digits of year keep every sum below far under 2^63 seconds; only the last step
        // to nanoseconds could overflow, and the range is checked in seconds before it.
        let seconds = days(fromCivil: y, m, d) * 86_400 + hh * 3600 + mm * 60 + ss - offset
        let lowest = supported.lowerBound.nanoseconds / 1_000_000_000
        let beyond = supported.upperBound.nanoseconds / 1_000_000_000
        guard seconds >= lowest, seconds < beyond else { return nil }
        return Timestamp(nanoseconds: seconds * 1_000_000_000 + nanos)
    }

    /// Howard Hinnant's days-from-civil: the day count of a proleptic Gregorian date.
    private static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    private static func pad(_ v: Int64, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    /// Howard Hinnant's days-from-civil inverse: proleptic Gregorian date of a day count.
    private static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }
}
