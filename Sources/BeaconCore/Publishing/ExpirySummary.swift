/// How a webhook's expired events (`max_age`) reach the log: the first expiry at once, then
/// one summed line a minute at most.
///
/// A receiver that stays down expires events as fast as the site makes them: the worker finds
/// a few more past `max_age` every time it wakes, several times a second on a busy store. A
/// line each time was about 2,000 lines an hour saying the same thing, and journald's rate
/// limit then drops the daemon's other lines with them. The dead letters themselves are
/// counted exactly elsewhere (`/v1/outbox`, metrics); this is only what is said about them.
public struct ExpirySummary: Sendable, Equatable {
    /// The longest a count waits before it is told.
    public static let interval = TimeSpan.minutes(1)

    /// Events expired and not told yet.
    public private(set) var untold = 0
    private var lastTold: Timestamp?

    public init() {}

    /// What to tell after `events` expired at `now`: nil to stay quiet for now.
    public mutating func expired(_ events: Int, at now: Timestamp) -> Report? {
        guard events > 0 else { return nil }
        untold += events
        if let lastTold, now < lastTold + ExpirySummary.interval, now >= lastTold { return nil }
        return tell(at: now)
    }

    /// The count still untold, when the worker stops (nil if none): nothing goes unsaid.
    public mutating func flush(at now: Timestamp) -> Report? {
        untold > 0 ? tell(at: now) : nil
    }

    /// One line's worth: `events` expired since `since` (nil: the first line of this worker).
    public struct Report: Sendable, Equatable {
        public var events: Int
        public var since: Timestamp?

        public init(events: Int, since: Timestamp?) {
            self.events = events
            self.since = since
        }
    }

    private mutating func tell(at now: Timestamp) -> Report {
        let report = Report(events: untold, since: lastTold)
        untold = 0
        lastTold = now
        return report
    }
}
