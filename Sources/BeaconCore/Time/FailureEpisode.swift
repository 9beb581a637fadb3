/// A write that fails and later works again (a full disk, a failing SD card), told to the
/// log once when it starts failing and once when it recovers, not on every attempt: the
/// daemon retries every few seconds, and a line each time would bury what an operator
/// needs to see, then be dropped by journald's rate limit with everything else.
public struct FailureEpisode: Sendable, Equatable {
    /// When the current run of failures began; nil while writes work.
    public private(set) var since: Timestamp?
    /// Attempts that failed in the current run.
    public private(set) var failures = 0

    public init() {}

    /// Records a failure; true for the first of a run (the one to log).
    public mutating func failed(at t: Timestamp) -> Bool {
        failures += 1
        guard since == nil else { return false }
        since = t
        return true
    }

    /// Records a success; how long the run of failures lasted, if one just ended.
    public mutating func succeeded(at t: Timestamp) -> TimeSpan? {
        guard let since else { return nil }
        self.since = nil
        failures = 0
        return t - since
    }
}
