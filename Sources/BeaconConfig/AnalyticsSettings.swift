import BeaconCore

/// `analytics:` (SPEC §8): how long the zones' hourly and daily roll-ups and the heat map are
/// kept. Apart from `history:`, which trims positions after hours: a store compares this
/// month with the last.
public struct AnalyticsSettings: Sendable, Equatable {
    public var retention = TimeSpan.hours(24 * 90)
    public init() {}
}

extension SectionReader {
    /// `retention`: 1 day … 3 years (about 2 MB a day for 50 zones and a busy floor's heat).
    func readAnalytics(_ node: Node, _ a: inout AnalyticsSettings) {
        read(node, "analytics", [.duration("retention", .hours(24)...(.hours(24 * 366 * 3)), \.retention)], into: &a)
    }
}
