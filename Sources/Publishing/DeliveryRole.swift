import BeaconCore

/// What a webhook's worker does on a gateway of a site (SPEC §6.3): the site's locator
/// delivers; every other gateway stands by, its outbox filled as the locator's is (each
/// gateway's engine makes the site's events), so that the next locator can deliver what the
/// last one had not when it died.
public enum DeliveryRole: Sendable, Equatable {
    case deliver
    /// Keep what was enqueued from `keepFrom` on (the locator's last delivery, less an
    /// overlap); what is older was delivered by the locator. nil: nothing known of its
    /// deliveries yet, keep all (up to `max_age`).
    case standby(keepFrom: Timestamp?)
}
