import BeaconCore
import Foundation
import Testing

/// The log-distance fit recovers a receiver's own measured power and exponent from readings
/// at known distances, keeps the exponent when the distances cannot tell it, and says how much
/// it improves the fit.
struct RSSICalibrationTests {
    @Test func readingsAtSeveralDistancesGiveBackTheRadiosOwnModel() {
        // A radio 6 dB louder than the default with n = 2.6, read with ±1 dB of deterministic noise.
        var samples: [RSSICalibration.Sample] = []
        for (i, d) in [0.8, 1.5, 2.5, 4.0, 6.0, 9.0].enumerated() {
            for k in 0..<5 {
                let noise = Double((i * 5 + k) % 3 - 1)
                samples.append(.init(receiver: "r1", distance: d, rssi: -53 - 26 * log10(d) + noise))
            }
        }
        let fit = RSSICalibration.fit(samples)
        #expect(fit.count == 1 && fit[0].exponentFitted && fit[0].samples == 30)
        #expect(abs(fit[0].rssiAt1m - -53) < 0.7, "\(fit[0])")
        #expect(abs(fit[0].pathLossExponent - 2.6) < 0.1, "\(fit[0])")
        #expect(fit[0].rmsAfter < 1 && fit[0].rmsBefore > 2.5, "\(fit[0])")
    }

    @Test func oneDistanceFitsTheMeasuredPowerAndKeepsTheExponent() {
        let samples = (0..<10).map { RSSICalibration.Sample(receiver: "r2", distance: 3, rssi: -70 + Double($0 % 2)) }
        let fit = RSSICalibration.fit(
            samples, previous: ["r2": ReceiverCalibration(rssiAt1m: -59, pathLossExponent: 2.2)])
        #expect(fit.first?.exponentFitted == false && fit.first?.pathLossExponent == 2.2)
        // -69.5 = A - 22 log10(3)
        #expect(abs((fit.first?.rssiAt1m ?? 0) - (-69.5 + 22 * log10(3))) < 1e-9)
    }

    @Test func anExponentFittedToNoiseIsClamped() {
        let samples = [
            RSSICalibration.Sample(receiver: "r3", distance: 1, rssi: -60),
            RSSICalibration.Sample(receiver: "r3", distance: 5, rssi: -59),
        ]
        #expect(RSSICalibration.fit(samples).first?.pathLossExponent == RSSICalibration.exponentRange.lowerBound)
    }
}
