#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Smoothed RSSI of one beacon at one receiver: a one-dimensional Kalman filter with a
/// random-walk model, whose innovations are clipped at 2.5 σ.
///
/// Why this and not AltBeacon's 20 s running average:
/// - The gain follows the time between readings, not their count: a beacon heard at 10 Hz
///   and one heard every 2 s are both smoothed over about the same seconds, and the first
///   reading after a silence is trusted at once (the variance has grown) instead of being
///   averaged with readings from before the gap.
/// - Multipath fades of 10-20 dB are the heavy tail of indoor RSSI noise. Clipping the
///   innovation keeps one fade from dragging the estimate, so the filter can afford a short
///   time constant (about 1-3 s) and still be as quiet as a long plain average.
/// `BENCHMARKS.md` and `RSSIFilterTests` measure lag and noise against the running average.
public struct RSSIFilter: Sendable, Equatable {
    /// How fast the true RSSI may wander, in dB² per second (a person walking).
    public static let processNoise = 4.0
    /// Variance of one reading around the truth, in dB² (σ ≈ 4 dB indoors).
    public static let measurementNoise = 16.0
    /// Innovations beyond this many standard deviations are clipped.
    public static let clipSigma = 2.5

    public private(set) var estimate: Double
    private var variance: Double
    private var last: Timestamp

    public init(rssi: Int, at t: Timestamp) {
        estimate = Double(rssi)
        variance = RSSIFilter.measurementNoise
        last = t
    }

    public mutating func update(rssi: Int, at t: Timestamp) {
        let dt = max(0, (t - last).seconds)
        last = max(last, t)
        let predicted = variance + RSSIFilter.processNoise * dt
        let spread = predicted + RSSIFilter.measurementNoise
        let limit = RSSIFilter.clipSigma * sqrt(spread)
        let innovation = min(max(Double(rssi) - estimate, -limit), limit)
        let gain = predicted / spread
        estimate += gain * innovation
        variance = (1 - gain) * predicted
    }
}

/// Distance from RSSI with the log-distance path-loss model (SPEC §3):
/// `10 ^ ((rssi_at_1m - rssi) / (10 * n))`.
public enum PathLoss {
    public static func distance(rssi: Double, rssiAt1m: Int, exponent n: Double) -> Double {
        pow(10, (Double(rssiAt1m) - rssi) / (10 * max(n, 0.1)))
    }
}
