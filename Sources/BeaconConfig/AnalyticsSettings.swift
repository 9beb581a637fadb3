import BeaconCore

/// `analytics:` (SPEC §8): how long the zones' hourly and daily roll-ups and the heat map are
/// kept. Apart from `history:`, which trims positions after hours: a store compares this
/// month with the last.
public struct AnalyticsSettings: Sendable, Equatable {
    public var retention = TimeSpan.hours(24 * 90)
    /// `visit_lag`, `rejoin`, `min_visit` (SPEC §10): how stays become `zone.visit` events.
    public var visits = VisitRules()
    public init() {}
}

extension SectionReader {
    /// `retention`: 1 day … 3 years (about 2 MB a day for 50 zones and a busy floor's heat).
    /// `visit_lag` 10 s … 10 min, at least `rejoin` (0 … 5 min); `min_visit` 0 … 1 h.
    func readAnalytics(_ node: Node, _ a: inout AnalyticsSettings) {
        read(
            node, "analytics",
            [
                .duration("retention", .hours(24)...(.hours(24 * 366 * 3)), \.retention),
                .duration("visit_lag", .seconds(10)...(.minutes(10)), \.visits.lag),
                .duration("rejoin", .seconds(0)...(.minutes(5)), \.visits.rejoin),
                .duration("min_visit", .seconds(0)...(.hours(1)), \.visits.minVisit),
            ], into: &a)
        if a.visits.lag < a.visits.rejoin {
            reader.fail(
                node, "analytics.visit_lag",
                "must be at least analytics.rejoin (\(a.visits.rejoin)): a visit is told once a step out has lasted that long"
            )
        }
    }
}
