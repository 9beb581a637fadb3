import BeaconCore

extension WebhookWorker {
    /// What the worker asks and tells the daemon: given at construction, so that none changes
    /// under a running worker. All optional: a worker alone delivers always, on the wall clock.
    public struct Hooks: Sendable {
        /// Time since boot (`CLOCK_BOOTTIME`): with it, a step of the wall clock moves this
        /// webhook's waiting events' enqueue times by the step (`StateStore.shiftEnqueued`), so
        /// that `max_age` counts the time they waited. Without it, NTP setting right a gateway
        /// that booted days behind would dead-letter every event made before, just as the
        /// network (and with it NTP and the webhook) came back.
        public let elapsed: (@Sendable () -> TimeSpan)?
        /// On a gateway of a site, whether this worker delivers now (this gateway is the site's
        /// locator) or stands by (SPEC §6.3); nil: always delivers.
        public let role: (@Sendable () -> DeliveryRole)?
        /// Told after each delivery the receiver acknowledged: the webhook and the enqueue time
        /// of the last event in it (the site's locator tells the others, `delivered/<webhook>`).
        public let onDelivered: (@Sendable (String, Timestamp) -> Void)?
        /// Where an acknowledgement the full disk would not save is kept for the next run
        /// (and for a worker that replaces this one at a reload); nil: in memory only.
        public let acks: UnsavedAcks?

        public init(
            elapsed: (@Sendable () -> TimeSpan)? = nil, role: (@Sendable () -> DeliveryRole)? = nil,
            onDelivered: (@Sendable (String, Timestamp) -> Void)? = nil, acks: UnsavedAcks? = nil
        ) {
            (self.elapsed, self.role, self.onDelivered, self.acks) = (elapsed, role, onDelivered, acks)
        }
    }
}
