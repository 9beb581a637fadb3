import BeaconCore
import Storage

/// The latest position of each asset not yet sent to one output (SPEC §4.4). A receiver that
/// was down for ten minutes wants to know where the assets are now, not where each was every
/// second of those minutes: positions are state, so a newer one replaces the one still
/// waiting (counted as conflated), and they wait in memory, never in the outbox. Alerts keep
/// their own, durable, ordered way through the outbox.
///
/// Bounded by the number of assets: one entry each.
struct ConflatedPositions: Sendable {
    /// Per asset: its place in the queue and since when it has waited (kept when a newer
    /// position replaces the one waiting, so that a batch still leaves `max_delay` after the
    /// asset's first unsent position, and the asset keeps its turn), the latest position (its
    /// `enqueuedAt` the waiting time), and when that latest one came (for `max_age`).
    private var waiting: [String: (serial: Int, entry: StateStore.OutboxEntry, came: Timestamp)] = [:]
    private var serial = 0
    /// Positions replaced before they were sent, since the worker started.
    private(set) var conflated = 0

    var count: Int { waiting.count }

    /// A new position of `asset`: replaces the one waiting, if any.
    mutating func offer(asset: String, _ entry: StateStore.OutboxEntry) {
        if let old = waiting[asset] {
            var latest = entry
            latest.enqueuedAt = old.entry.enqueuedAt
            waiting[asset] = (old.serial, latest, entry.enqueuedAt)
            conflated += 1
        } else {
            serial += 1
            waiting[asset] = (serial, entry, entry.enqueuedAt)
        }
    }

    /// The oldest waiting positions, at most `limit`, in the order they came.
    func next(_ limit: Int) -> [StateStore.OutboxEntry] {
        guard limit > 0, !waiting.isEmpty else { return [] }
        return waiting.values.sorted { $0.serial < $1.serial }.prefix(limit).map(\.entry)
    }

    /// Positions enqueued before `cutoff` (the output's `max_age`) go, counted as conflated:
    /// an output down that long gets the next ones.
    mutating func expire(before cutoff: Timestamp) {
        guard waiting.values.contains(where: { $0.came < cutoff }) else { return }
        let before = waiting.count
        waiting = waiting.filter { $0.value.came >= cutoff }
        conflated += before - waiting.count
    }

    /// The receiver took these: each goes unless a newer position of its asset came meanwhile.
    mutating func sent(_ entries: [StateStore.OutboxEntry]) {
        guard !entries.isEmpty else { return }
        let ids = Set(entries.map(\.eventID))
        waiting = waiting.filter { !ids.contains($0.value.entry.eventID) }
    }
}
