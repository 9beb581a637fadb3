/// How long the event history keeps each class of event, and how many of each at most.
///
/// Why two classes: a store's positions alone are about 900,000 events a day, so one shared
/// count kept zone and region alerts for about three hours — gone before anyone asked what
/// happened overnight. Alerts and state changes are few and are what an operator looks back
/// for (30 days); positions, ranging and proximity are many and only recent ones matter (a
/// few hours). Each class is bounded by age and by count, so the file stays bounded however
/// busy the site.
public struct HistoryRetention: Sendable, Equatable {
    public struct Keep: Sendable, Equatable {
        public var maxAge: TimeSpan
        public var maxEvents: Int

        public init(maxAge: TimeSpan, maxEvents: Int) {
            self.maxAge = maxAge
            self.maxEvents = maxEvents
        }
    }

    /// Everything but telemetry: region, zone, alarm, asset zone and adapter events.
    /// At about 0.7 KB per event on disk, the defaults bound the history near 210 MB.
    public var alerts = Keep(maxAge: .hours(24 * 30), maxEvents: 200_000)
    /// `ranging`, `beacon.proximity` on the disk; `asset.position` in memory only (SPEC §4.4,
    /// `RecentEvents`), within this age and at most `RecentEvents.limit` of them.
    public var telemetry = Keep(maxAge: .hours(6), maxEvents: 100_000)

    public init() {}

    public init(alerts: Keep, telemetry: Keep) {
        self.alerts = alerts
        self.telemetry = telemetry
    }

    /// Whether a type (`asset.position` or `beacond.asset.position`) is kept as telemetry: the
    /// measurements the next one supersedes (`EventClass.measurement` and `.position`).
    public static func isTelemetry(_ type: String) -> Bool { EventClass(type: type).isSuperseded }

    public func keep(telemetry: Bool) -> Keep { telemetry ? self.telemetry : alerts }
}
