import Testing

@testable import BeaconCore

/// Durations in log lines and messages read as the config writes them: `retry_in=857689125ns`
/// told an operator nothing at a glance (issue 25).
@Suite struct TimeSpanTextTests {
    @Test func rfc3339TimesAreReadBackAsWritten() {
        for ns: Int64 in [0, 1_764_145_200_125_000_000, 951_782_400_000_000_000, 7_258_118_399_999_000_000] {
            let t = Timestamp(nanoseconds: ns)
            #expect(RFC3339.parse(RFC3339.format(t)) == t)
        }
        // Outside the years a text from outside may name (1970 up to 2200): written, not read.
        #expect(RFC3339.format(Timestamp(nanoseconds: -86_400_000_000_000)) == "1969-12-31T00:00:00.000Z")
        #expect(RFC3339.parse("1969-12-31T00:00:00.000Z") == nil)
        #expect(RFC3339.parse("2026-11-26T09:00:00+01:00") == RFC3339.parse("2026-11-26T08:00:00Z"))
        #expect(
            RFC3339.parse("2026-11-26T08:00:00.5Z")?.nanoseconds == RFC3339.parse("2026-11-26T08:00:00Z")!.nanoseconds
                + 500_000_000)
        for bad in [
            "2026-11-26", "2026-13-01T00:00:00Z", "2026-11-26T08:00:00", "2026-11-26T08:00:00Zjunk", "yesterday",
        ] {
            #expect(RFC3339.parse(bad) == nil, "\(bad)")
        }
        #expect(TimeSpan(parsing: "30d") == .hours(720))
    }

    @Test func unevenSpansAreWrittenInSecondsOrMillisecondsAndReadBack() {
        let cases: [(Int64, String)] = [
            (857_689_125, "857.689ms"), (165_400_000_123, "165.4s"), (2_500_000_001, "2.5s"),
            (1_000_500_000, "1.001s"), (1_234, "0.001ms"), (-1_500_000_007, "-1.5s"), (30_000_000_000, "30s"),
            (2_500_000_000, "2500ms"),
            (90_000_000_000, "90s"), (500_000_000, "500ms"),
        ]
        for (ns, text) in cases {
            #expect(TimeSpan(nanoseconds: ns).description == text, "\(ns)")
        }
        for ns: Int64 in [857_689_125, 165_400_000_123, 2_500_000_001] {
            let back = TimeSpan(parsing: TimeSpan(nanoseconds: ns).description)
            #expect(back.map { abs($0.nanoseconds - ns) <= 500_000 } == true, "\(ns)")
        }
    }
}
