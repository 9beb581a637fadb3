import BeaconCore

/// The history's recent positions, in memory (SPEC §4.4): `asset.position` events are state,
/// superseded within seconds, and writing each to the history was most of what a store's
/// gateway wrote to its flash card. The history's readers (`GET /v1/events`, the stream's
/// resumption) see these merged with the stored events by id, so within a run nothing is
/// missing; a crash forgets them, as the contract says it may.
///
/// Bounded by the history's telemetry age and by `limit` events (about 450 bytes each: 9 MB
/// at most), whichever is less. Ids sort in publication order, so the ring is sorted by id.
struct RecentEvents: Sendable {
    /// The most positions kept: 20 tags placed every second for a quarter of an hour.
    static let limit = 20_000

    private(set) var events: [StateStore.StoredEvent] = []
    /// Index of the oldest kept event in `events` (dropped ones are compacted away in chunks).
    private var start = 0

    var count: Int { events.count - start }

    /// Appends events (newest last) and drops the oldest past `keep`'s age before the newest,
    /// or past its count bounded by `limit`.
    mutating func append(_ fresh: [StateStore.StoredEvent], keep: HistoryRetention.Keep) {
        guard !fresh.isEmpty else { return }
        events += fresh
        let newest = fresh.map(\.time).max()!
        let cutoff = newest - keep.maxAge
        let bound = min(keep.maxEvents, Self.limit)
        while start < events.count && (count > bound || events[start].time < cutoff) { start += 1 }
        if start >= 1024 && start * 2 >= events.count {
            events.removeFirst(start)
            start = 0
        }
    }

    /// Forgets these ids (an operator's delete), or all.
    mutating func remove(_ ids: Set<String>?) {
        var kept = Array(events[start...])
        if let ids { kept.removeAll { ids.contains($0.id) } } else { kept = [] }
        (events, start) = (kept, 0)
    }

    /// The kept events a history read may return, in its order: after `after` and before
    /// `before` (ids compared as text, which sorts in publication order), at or after
    /// `since`, of the types `glob` matches.
    func matching(
        after: String?, before: String?, since: Timestamp?, glob: EventTypeGlob?, newestFirst: Bool
    ) -> [StateStore.StoredEvent] {
        var selected: [StateStore.StoredEvent] = []
        // Sorted by id: a resuming reader's page starts where its id would be, not at the oldest.
        var low = start
        if let after {
            var high = events.count
            while low < high {
                let mid = (low + high) / 2
                if events[mid].id <= after { low = mid + 1 } else { high = mid }
            }
        }
        for e in events[low...] {
            if let before, e.id >= before { break }
            if let since, e.time < since { continue }
            if let glob, !glob.matches(type: e.type) { continue }
            selected.append(e)
        }
        return newestFirst ? selected.reversed() : selected
    }

    /// The newest event's id.
    var newestID: String? { count > 0 ? events.last?.id : nil }
}
