#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Smoothed RSSI of one beacon at one receiver: the median of the last 7 readings, then an
/// exponential average with a 3 s time constant.
///
/// Why this and not AltBeacon's 20 s running average:
/// - Indoor RSSI noise is heavy-tailed: multipath fades drop single readings by 10–20 dB.
///   A median of a few readings removes them outright, so the averaging after it can be
///   short and still be as quiet as a long average of raw readings.
/// - The average's weight follows the time between readings, not their count, and the
///   window restarts after a 10 s silence, so the first readings after a gap are trusted
///   instead of being mixed with stale ones.
/// On a simulated walk-away (15 dB step, 3 dB noise, 10 % fades; `RSSIFilterTests`, 10
/// seeds) it covers 90 % of the step in 10.8 s against 17.1 s at 1 Hz, 7.5 s against 15.6 s
/// at 5 Hz and 6.5 s against 16.0 s at 10 Hz, with steady-state noise within 18 % of the
/// 20 s average's, and 19–43 % less tracking error over the whole walk.
public struct RSSIFilter: Sendable, Equatable {
    public static let medianWindow = 7
    public static let timeConstant = 3.0
    /// A silence longer than this restarts the median window.
    public static let restartAfter = TimeSpan.seconds(10)

    public private(set) var estimate: Double
    private var window: InlineArray<7, Int8>
    private var count: Int8 = 1
    private var head: Int8 = 1
    /// Seconds; `timeConstant` for ranging, shorter for positions of walking tags. Declared
    /// here, it fits in padding: the filter stays 32 bytes, as the ranging hot path wants.
    private var tau: Float = Float(RSSIFilter.timeConstant)
    private var last: Timestamp

    public init(rssi: Int, at t: Timestamp) {
        estimate = Double(rssi)
        window = InlineArray(repeating: RSSIFilter.clamp(rssi))
        last = t
    }

    public init(rssi: Int, at t: Timestamp, timeConstant: Double) {
        self.init(rssi: rssi, at: t)
        tau = Float(timeConstant)
    }

    /// Moves the filter's clock with a step of the wall clock (`BeaconEngine.shiftClock`).
    mutating func shift(by d: TimeSpan) { last = last + d }

    public static func == (a: RSSIFilter, b: RSSIFilter) -> Bool {
        a.estimate == b.estimate && a.last == b.last && a.count == b.count
    }

    private static func clamp(_ rssi: Int) -> Int8 { Int8(max(-128, min(127, rssi))) }

    public mutating func update(rssi: Int, at t: Timestamp) {
        let gap = t - last
        if gap > RSSIFilter.restartAfter {
            self = RSSIFilter(rssi: rssi, at: t, timeConstant: Double(tau))
            return
        }
        last = max(last, t)
        window[Int(head)] = RSSIFilter.clamp(rssi)
        head = (head + 1) % Int8(RSSIFilter.medianWindow)
        count = min(count + 1, Int8(RSSIFilter.medianWindow))
        let median = self.median()
        let alpha = 1 - exp(-max(0, gap.seconds) / Double(tau))
        estimate += alpha * (median - estimate)
    }

    /// Median of the readings in the window (mean of the middle two for an even count).
    private func median() -> Double {
        var sorted = InlineArray<7, Int8>(repeating: 0)
        let n = Int(count)
        // The newest `n` readings end just before `head`.
        for i in 0..<n {
            let index = (Int(head) - n + i + RSSIFilter.medianWindow) % RSSIFilter.medianWindow
            let v = window[index]
            var j = i
            while j > 0 && sorted[j - 1] > v {
                sorted[j] = sorted[j - 1]
                j -= 1
            }
            sorted[j] = v
        }
        return n % 2 == 1 ? Double(sorted[n / 2]) : (Double(sorted[n / 2 - 1]) + Double(sorted[n / 2])) / 2
    }
}

/// Distance from RSSI with the log-distance path-loss model (SPEC §3):
/// `10 ^ ((rssi_at_1m - rssi) / (10 * n))`.
public enum PathLoss {
    public static func distance(rssi: Double, rssiAt1m: Double, exponent n: Double) -> Double {
        pow(10, (rssiAt1m - rssi) / (10 * max(n, 0.1)))
    }
}
