import BeaconCore

extension SectionReader {
    /// `history:` (extension): how long and how many events of each class the history keeps
    /// (`HistoryRetention`). Counts are bounded so that the state file stays bounded: about
    /// 0.7 KB per event on disk with its indexes (a position's CloudEvent is ~400 bytes).
    func readHistory(_ node: Node, _ h: inout HistoryRetention) {
        guard let f = reader.mapping(node, "history", allowed: ["alerts", "telemetry"]) else { return }
        with(f, "alerts") { n, p in readKeep(n, p, &h.alerts) }
        with(f, "telemetry") { n, p in readKeep(n, p, &h.telemetry) }
    }

    private func readKeep(_ node: Node, _ path: String, _ keep: inout HistoryRetention.Keep) {
        guard let f = reader.mapping(node, path, allowed: ["max_age", "max_events"]) else { return }
        with(f, "max_age") { n, p in
            if let v = reader.duration(n, p, min: .minutes(1), max: .hours(24 * 366)) { keep.maxAge = v }
        }
        with(f, "max_events") { n, p in if let v = reader.int(n, p, 100...5_000_000) { keep.maxEvents = v } }
    }
}
