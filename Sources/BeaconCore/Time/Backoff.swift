/// How long to wait after the `failures`-th failure in a row: `first` doubling up to
/// `longest`, scaled by a jitter factor in [0.5, 1.0] (`jitter` in [0, 1) from the caller's
/// random source), so that many gateways recovering together do not all try in the same
/// instant. One rule for webhook retries and broker reconnects.
public enum Backoff {
    public static func delay(failures: Int, first: TimeSpan, longest: TimeSpan, jitter: Double) -> TimeSpan {
        let exponent = Int64(min(max(failures - 1, 0), 20))
        let base = min(first.nanoseconds << exponent, longest.nanoseconds)
        let factor = 0.5 + 0.5 * min(max(jitter, 0), 1)
        return TimeSpan(nanoseconds: Int64(Double(base) * factor))
    }
}
