/// A count of something that keeps happening — a dead webhook's events expiring, sightings
/// shed by an engine that fell behind — told to the log at once, then summed at most once a
/// minute.
///
/// Such things happen as fast as the site makes events: a dead webhook's worker finds a few
/// more events past `max_age` every time it wakes, several times a second on a busy store. A
/// line each time was about 2,000 lines an hour saying the same thing, and journald's rate
/// limit then drops the daemon's other lines with them. The exact counts are kept elsewhere
/// (`/v1/outbox`, `/metrics`); this is only what is said about them.
public struct LogSummary: Sendable, Equatable {
    /// The longest a count waits before it is told.
    public static let interval = TimeSpan.minutes(1)

    /// Counted and not told yet.
    public private(set) var untold = 0
    private var lastTold: Timestamp?

    public init() {}

    /// What to tell after `count` more at `now`: nil to stay quiet for now.
    public mutating func add(_ count: Int, at now: Timestamp) -> Report? {
        guard count > 0 else { return nil }
        untold += count
        if let lastTold, now < lastTold + LogSummary.interval, now >= lastTold { return nil }
        return tell(at: now)
    }

    /// The count still untold, at stop (nil if none): nothing goes unsaid.
    public mutating func flush(at now: Timestamp) -> Report? {
        untold > 0 ? tell(at: now) : nil
    }

    /// One line's worth: `count` since `since` (nil: the first line).
    public struct Report: Sendable, Equatable {
        public var count: Int
        public var since: Timestamp?

        public init(count: Int, since: Timestamp?) {
            self.count = count
            self.since = since
        }
    }

    private mutating func tell(at now: Timestamp) -> Report {
        let report = Report(count: untold, since: lastTold)
        untold = 0
        lastTold = now
        return report
    }
}
