#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Fits each receiver's `rssi_at_1m` and `path_loss_exponent` from readings of a reference
/// tag at known distances: the log-distance model `rssi = A − 10·n·log10(d)` by least squares,
/// which is linear in `A` and `n`.
///
/// Why per receiver: one radio's antenna, case and mounting height make its measured power
/// differ from the next one's by several dB (the kolakowski flat's anchors span −52 to −43 dBm
/// at 1 m), and a shared default turns that into metres of range error. With readings from
/// one distance only, or from distances too close together to tell `n` from `A`, the
/// exponent is kept as it is and only `A` is fitted.
public enum RSSICalibration {
    /// One reading: a receiver heard the tag at `rssi` dBm from `distance` metres.
    public struct Sample: Sendable, Equatable {
        public var receiver: String
        public var distance: Double
        public var rssi: Double

        public init(receiver: String, distance: Double, rssi: Double) {
            self.receiver = receiver
            self.distance = distance
            self.rssi = rssi
        }
    }

    public struct Fit: Sendable, Equatable {
        public var receiver: String
        public var rssiAt1m: Double
        public var pathLossExponent: Double
        /// Whether the exponent was fitted (false: kept, readings at too few distances).
        public var exponentFitted: Bool
        public var samples: Int
        /// Root-mean-square of the readings' residuals (dB) under the previous calibration and
        /// under this one: what the fit improves.
        public var rmsBefore: Double
        public var rmsAfter: Double
    }

    /// Exponents outside this are a fit to noise (or to a wall), not to the room.
    public static let exponentRange = 1.2...6.0
    /// The spread of log10(distance) below which `n` is not fitted: a factor of 1.6 in distance.
    public static let minimumLogSpread = 0.2

    /// A fit per receiver with readings; `previous` is each one's calibration until now (the
    /// default −59 dBm and n = 2 when absent).
    public static func fit(_ samples: [Sample], previous: [String: ReceiverCalibration] = [:]) -> [Fit] {
        var byReceiver: [String: [Sample]] = [:]
        for s in samples where s.distance > 0 && s.rssi.isFinite { byReceiver[s.receiver, default: []].append(s) }
        return byReceiver.keys.sorted().map { receiver in
            let list = byReceiver[receiver]!
            let old = previous[receiver] ?? ReceiverCalibration(rssiAt1m: -59, pathLossExponent: 2)
            let oldA = old.rssiAt1m ?? -59
            let x = list.map { -10 * log10($0.distance) }
            let y = list.map(\.rssi)
            let n = Double(list.count)
            let meanX = x.reduce(0, +) / n, meanY = y.reduce(0, +) / n
            let sxx = x.reduce(0) { $0 + ($1 - meanX) * ($1 - meanX) }
            let sxy = zip(x, y).reduce(0) { $0 + ($1.0 - meanX) * ($1.1 - meanY) }
            // The spread of log10(d) is that of x over 10.
            let spread = (x.max()! - x.min()!) / 10
            var exponent = old.pathLossExponent
            var fitted = false
            if spread >= minimumLogSpread, sxx > 0 {
                exponent = min(max(sxy / sxx, exponentRange.lowerBound), exponentRange.upperBound)
                fitted = true
            }
            let a = meanY - exponent * meanX
            func rms(_ a: Double, _ e: Double) -> Double {
                (zip(x, y).reduce(0) { $0 + pow($1.1 - (a + e * $1.0), 2) } / n).squareRoot()
            }
            return Fit(
                receiver: receiver, rssiAt1m: a, pathLossExponent: exponent, exponentFitted: fitted,
                samples: list.count, rmsBefore: rms(oldA, old.pathLossExponent), rmsAfter: rms(a, exponent))
        }
    }
}
