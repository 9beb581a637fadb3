import BeaconCore
import Logging
import Storage
import Synchronization

/// A worker on a gateway of a site (SPEC §6.3): what the locator may send, and what a
/// standby keeps.
extension WebhookWorker {
    /// Whether an entry may be sent in this role: as the site's locator, only once the other
    /// gateways have been told of it.
    func sendable(_ role: DeliveryRole) -> (StateStore.OutboxEntry) -> Bool {
        guard case let .locator(through, _) = role else { return { _ in true } }
        // A position is not handed over: nothing to wait for.
        return { !$0.isStored || $0.enqueuedAt <= through }
    }

    /// A standby sends nothing: it keeps what the locator may not have delivered yet, so that
    /// it can deliver it if it becomes the locator, and drops what the locator says it
    /// delivered. What waits past `max_age` becomes a dead letter here too: the locator may be
    /// unable to deliver (or be no locator at all), and nothing is dropped unseen.
    func standBy(keepFrom: Timestamp?, marks: [String: Timestamp], at now: Timestamp) -> TimeSpan {
        do {
            let dropped = try store.deliveredElsewhere(webhook: settings.id, ownBefore: keepFrom, marks: marks)
            if dropped > 0 { state.withLock { $0.deliveredByLocator += dropped } }
            let cutoff = schedule.expiryCutoff(now: now)
            if let oldest = try store.pending(webhook: settings.id, limit: 1).first?.enqueuedAt, oldest < cutoff {
                let expired = try store.expire(webhook: settings.id, enqueuedBefore: cutoff, at: now, reason: "max_age")
                state.withLock { $0.deadLettered += expired }
                if let report = expiries.add(expired, at: now) { tell(report, at: now) }
            }
        } catch {
            outboxUnreadable(error, at: now)
        }
        return .seconds(1)
    }
}
