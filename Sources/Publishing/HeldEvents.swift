import BeaconCore
import Storage

/// Events the state store could not take — a full disk, a failing SD card — kept in memory,
/// in order, until it can. Without them every event made while the disk was full was lost
/// for good: not in the history, never sent to a webhook.
///
/// Memory is bounded (`limit` events: the daemon's RSS grew by 10 MB to hold them,
/// `bench/disk-full.py`). Past it,
/// the oldest superseded events go first (`EventClass.state`: positions, ranging, proximity):
/// each is replaced by the next one for the same asset, region or beacon within seconds, while
/// an enter or exit that is lost is a missed alert. Only when nothing else is left do the
/// oldest events of other kinds go.
struct HeldEvents: Sendable {
    static let limit = 10_000

    private(set) var events: [StateStore.StoredEvent] = []
    /// Events given up on since the store last took a write.
    private(set) var dropped = 0

    var isEmpty: Bool { events.isEmpty }

    /// Holds `batch` after what is held already, dropping what the bound asks for; returns
    /// the ids of the events dropped (the runtime copy drops them too).
    @discardableResult
    mutating func hold(_ batch: [StateStore.StoredEvent], limit: Int = HeldEvents.limit) -> [String] {
        events += batch
        var excess = events.count - limit
        guard excess > 0 else { return [] }
        var keep = [Bool](repeating: true, count: events.count)
        for i in events.indices where excess > 0 && EventClass(type: events[i].type).isSuperseded {
            keep[i] = false
            excess -= 1
        }
        for i in events.indices where excess > 0 && keep[i] {
            keep[i] = false
            excess -= 1
        }
        let droppedIDs = events.indices.filter { !keep[$0] }.map { events[$0].id }
        dropped += droppedIDs.count
        events = events.indices.filter { keep[$0] }.map { events[$0] }
        return droppedIDs
    }

    /// Empties the hold after the store took its events; returns how many were dropped.
    mutating func clear() -> Int {
        defer { self = HeldEvents() }
        return dropped
    }
}
