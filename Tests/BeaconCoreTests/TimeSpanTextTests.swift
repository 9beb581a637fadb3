import Testing

@testable import BeaconCore

/// Durations in log lines and messages read as the config writes them: `retry_in=857689125ns`
/// told an operator nothing at a glance (issue 25).
@Suite struct TimeSpanTextTests {
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
