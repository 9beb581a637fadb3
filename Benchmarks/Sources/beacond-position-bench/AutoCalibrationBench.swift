import BeaconConfig
import BeaconCore
import Foundation
import Simulation

/// `beacond-position-bench auto-calibrate`: `calibrate --auto` on the simulated store. Its
/// six receivers get antenna gains drawn with a spread of 2 dB (the truth each one's
/// `rssi_at_1m` should find: −59 dBm plus its gain), advertise to each other through the
/// store's channel (σ 4 dB shadowing fixed per pair, Rayleigh fading, 20 % loss) for five
/// minutes, and the engine's fit is compared with the truth, receiver by receiver, against
/// the configuration's shared −59 dBm before it.
func autoCalibrationBench() {
    for (gain, shadowing) in [(2.0, 4.0), (5.0, 4.0), (2.0, 2.0)] {
        autoCalibration(gainSpread: gain, shadowing: shadowing)
    }
}

private func autoCalibration(gainSpread: Double, shadowing: Double) {
    var config = load("config/sim-store.yaml")
    config.calibration.advertise = true
    // Only the receivers' own advertisements: the tags are not what is measured here.
    (config.assets, config.zones, config.alarms) = ([], [], [])
    var settings = config.simulation!
    settings.receiverGainDB = gainSpread
    settings.sigmaDB = shadowing
    var before: [Double] = []
    var after: [Double] = []
    var alone: [Double] = []
    var exponents: [Double] = []
    // Errors less their site's mean: what is left once one reference reading fixes the level.
    var relativeBefore: [Double] = []
    var relativeAfter: [Double] = []
    print(
        "auto calibration: sim-store's 6 receivers, gains σ \(f(gainSpread, 0)) dB, pair shadowing σ "
            + "\(f(shadowing, 0)) dB, fading, 20 % loss, 5 min, 5 seeds")
    for seed in UInt64(1)...5 {
        let start = Timestamp.seconds(1_767_225_600)
        var sim = SiteSimulator(config: config, settings: settings, seed: seed, start: start)
        var engine = BeaconEngine(configuration: config.engineConfiguration, start: start)
        while sim.now < start + .minutes(5) {
            for s in sim.advance().sightings { _ = engine.ingest(s) }
        }
        let fits = engine.calibration!.fit(previous: config.engineConfiguration.receivers)
        let eachAlone = engine.calibration!.fitEachAlone(previous: config.engineConfiguration.receivers)
        var line = "  seed \(seed):"
        var errors: [(before: Double, after: Double)] = []
        for (r, receiver) in config.receivers.enumerated() {
            guard let fit = fits.first(where: { $0.receiver == receiver.id }) else { continue }
            let truth = -59 + sim.receiverGains[r]
            before.append(abs(-59 - truth))
            after.append(abs(fit.rssiAt1m - truth))
            if let a = eachAlone.first(where: { $0.receiver == receiver.id }) { alone.append(abs(a.rssiAt1m - truth)) }
            if fit.exponentFitted { exponents.append(fit.pathLossExponent) }
            errors.append((-59 - truth, fit.rssiAt1m - truth))
            line += " \(receiver.id.dropFirst(3)) \(f(fit.rssiAt1m - truth, 1))"
        }
        print(line + "  (fitted − true rssi_at_1m, dB)")
        let meanBefore = errors.map(\.before).reduce(0, +) / Double(errors.count)
        let meanAfter = errors.map(\.after).reduce(0, +) / Double(errors.count)
        relativeBefore += errors.map { $0.before - meanBefore }
        relativeAfter += errors.map { $0.after - meanAfter }
    }
    func rms(_ v: [Double]) -> Double { (v.reduce(0) { $0 + $1 * $1 } / Double(v.count)).squareRoot() }
    print(
        "  rssi_at_1m error over \(after.count) receivers: RMS \(f(rms(before), 2)) dB with the shared −59 → "
            + "\(f(rms(after), 2)) dB fitted together; max \(f(before.max()!, 2)) → \(f(after.max()!, 2)) dB "
            + "(each receiver fitted alone: RMS \(f(rms(alone), 2)), max \(f(alone.max() ?? 0, 2)) dB)")
    print(
        "  the same less each site's mean error (the level one reference reading fixes, calibration.tag_offset_db): "
            + "RMS \(f(rms(relativeBefore), 2)) → \(f(rms(relativeAfter), 2)) dB, max "
            + "\(f(relativeBefore.map(abs).max()!, 2)) → \(f(relativeAfter.map(abs).max()!, 2)) dB")
    print(
        "  the room's exponent (fitted from \(exponents.count) receivers' pairs): mean "
            + "\(f(exponents.reduce(0, +) / Double(max(1, exponents.count)), 2)), range "
            + "\(f(exponents.min() ?? 0, 2))–\(f(exponents.max() ?? 0, 2)) (true 2.0)")
}

private func f(_ v: Double, _ places: Int) -> String { String(format: "%.\(places)f", v) }
