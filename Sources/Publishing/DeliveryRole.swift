import BeaconCore

/// What a webhook's worker does on a gateway of a site (SPEC §6.3): the site's locator
/// delivers; every other gateway stands by, its outbox filled as the locator's is (each
/// gateway's engine makes the site's events), so that the next locator can deliver what the
/// last one had not when it died.
///
/// `marks` are the other gateways' `delivered` marks for this webhook (gateway → the enqueue
/// time, on its clock, of the last event it delivered): an entry that carries a gateway's
/// decision (its id, `StateStore.takeDecision`) is dropped once that gateway's mark reaches it.
public enum DeliveryRole: Sendable, Equatable {
    /// Not in a site: deliver everything.
    case deliver
    /// The site's locator: deliver what was enqueued up to `through`; what is newer waits until
    /// the other gateways have been told of its alerts (`SiteDecision`), so that none of them
    /// can deliver an alert this one delivered under another id.
    case locator(through: Timestamp, marks: [String: Timestamp])
    /// Keep this gateway's own entries enqueued from `keepFrom` on (the locator's furthest
    /// delivery on any webhook, less an overlap: `SiteDeliveryGate.undecidedBefore`); older
    /// ones are alerts no locator decided. nil: nothing known of its deliveries yet, keep all
    /// (up to `max_age`).
    case standby(keepFrom: Timestamp?, marks: [String: Timestamp])

    /// Whether this worker sends.
    public var delivers: Bool {
        if case .standby = self { return false }
        return true
    }
}
