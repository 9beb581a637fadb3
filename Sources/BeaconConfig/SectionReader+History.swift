import BeaconCore

extension SectionReader {
    /// `history:` (extension): how long and how many events of each class the history keeps
    /// (`HistoryRetention`). Counts are bounded so that the state file stays bounded: about
    /// 0.7 KB per event on disk with its indexes (a position's CloudEvent is ~400 bytes).
    func readHistory(_ node: Node, _ h: inout HistoryRetention) {
        let keep: [ConfigField<HistoryRetention.Keep>] = [
            .duration("max_age", .minutes(1)...(.hours(24 * 366)), \.maxAge),
            .int("max_events", 100...5_000_000, \.maxEvents),
        ]
        read(
            node, "history",
            [
                .init("alerts") { r, n, p, h in r.read(n, p, keep, into: &h.alerts) },
                .init("telemetry") { r, n, p, h in r.read(n, p, keep, into: &h.telemetry) },
            ], into: &h)
    }
}
