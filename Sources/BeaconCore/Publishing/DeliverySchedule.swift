/// When a webhook's next request goes out (SPEC §4.2), decided from values and a clock so
/// that batching, backoff and expiry are exact in tests and the same in production.
///
/// - Batching: a batch leaves when it is full (`maxEvents`) or when its oldest event has
///   waited `maxDelay`.
/// - Backoff: after a failure the next attempt waits 1 s, 2 s, 4 s … up to 5 min, each
///   scaled by a jitter factor in [0.5, 1.0] so that many gateways recovering together do
///   not hit a receiver in lockstep.
/// - Expiry: events enqueued more than `maxAge` ago are dead letters, not retries.
/// - A step of the wall clock moves a pending retry with it (`shift`), as the worker moves
///   the waiting events' enqueue times: set back an hour, nothing waits an hour.
public struct DeliverySchedule: Sendable, Equatable {
    public var maxEvents: Int
    public var maxDelay: TimeSpan
    public var maxAge: TimeSpan
    public static let firstRetry = TimeSpan.seconds(1)
    public static let longestRetry = TimeSpan.minutes(5)

    /// Consecutive failed attempts.
    public private(set) var failures = 0
    /// No attempt before this (after a failure).
    public private(set) var retryAt: Timestamp?

    public init(maxEvents: Int, maxDelay: TimeSpan, maxAge: TimeSpan) {
        self.maxEvents = max(1, maxEvents)
        self.maxDelay = maxDelay
        self.maxAge = maxAge
    }

    public enum Decision: Sendable, Equatable {
        /// Nothing waits.
        case idle
        /// Send the oldest `count` events now.
        case send(count: Int)
        /// Check again at this time (a batch filling, or a retry pending).
        case wait(until: Timestamp)
    }

    /// What to do at `now` with `pending` events waiting, the oldest enqueued at `oldest`.
    public func decide(pending: Int, oldest: Timestamp?, now: Timestamp) -> Decision {
        guard pending > 0, let oldest else { return .idle }
        if let retryAt, now < retryAt { return .wait(until: retryAt) }
        if pending >= maxEvents || retryAt != nil { return .send(count: min(pending, maxEvents)) }
        let due = oldest + maxDelay
        return now >= due ? .send(count: pending) : .wait(until: due)
    }

    /// Moves the pending retry by a step of the wall clock (`ClockStepDetector`).
    public mutating func shift(by step: TimeSpan) { retryAt = retryAt.map { $0 + step } }

    /// Events enqueued before this time are expired.
    public func expiryCutoff(now: Timestamp) -> Timestamp { now - maxAge }

    /// Records a failed attempt at `now`; `jitter` is a number in [0, 1) from the caller's
    /// random source. Returns the time of the next attempt.
    @discardableResult
    public mutating func failed(at now: Timestamp, jitter: Double) -> Timestamp {
        failures += 1
        let next =
            now
            + Backoff.delay(
                failures: failures, first: DeliverySchedule.firstRetry, longest: DeliverySchedule.longestRetry,
                jitter: jitter)
        retryAt = next
        return next
    }

    /// The receiver is known to answer again (a test delivery it acknowledged, a reload):
    /// the pending retry is brought forward to `now`. The failure count stays, so a receiver
    /// that fails again backs off from where it was.
    public mutating func retryNow(at now: Timestamp) {
        if let retryAt, retryAt > now { self.retryAt = now }
    }

    public mutating func succeeded() {
        failures = 0
        retryAt = nil
    }
}
