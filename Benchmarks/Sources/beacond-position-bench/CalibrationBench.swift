import BeaconCore
import Foundation

/// `beacond-position-bench calibrate`: `RSSICalibration` on the kolakowski flat's calibration
/// recording (4,104 robot positions with each anchor's RSSI, tag at 1.3 m), compared anchor by
/// anchor with the values fitted by the dataset's own preparation (sightings/receivers.yaml),
/// and what each fit leaves as residual. Also fitted from 10 spots only, the way an operator
/// calibrates a store in 15 minutes.
func calibrationBench(_ directory: String) {
    func rows(_ file: String) -> [[String]] {
        guard let text = try? String(contentsOfFile: directory + "/" + file, encoding: .utf8) else {
            print("calibrate: cannot read \(directory)/\(file)")
            return []
        }
        return text.split(separator: "\n").dropFirst().map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
    }
    let anchors = rows("anchors.csv").compactMap { r -> (id: String, x: Double, y: Double, z: Double)? in
        guard r.count >= 4, let x = Double(r[1]), let y = Double(r[2]), let z = Double(r[3]) else { return nil }
        return ("anchor" + r[0], x, y, z)
    }
    // ,ts,x,heading,y,rssi_1..rssi_6
    let fingerprints = rows("calibration/calibration_df.csv")
    let tagHeight = 1.3
    func samples(_ keep: (Int) -> Bool) -> [RSSICalibration.Sample] {
        var out: [RSSICalibration.Sample] = []
        for (i, r) in fingerprints.enumerated() where keep(i) && r.count >= 11 {
            guard let x = Double(r[2]), let y = Double(r[4]) else { continue }
            for (k, a) in anchors.enumerated() {
                guard let rssi = Double(r[5 + k]) else { continue }
                let d = ((a.x - x) * (a.x - x) + (a.y - y) * (a.y - y) + (a.z - tagHeight) * (a.z - tagHeight))
                    .squareRoot()
                out.append(.init(receiver: a.id, distance: d, rssi: rssi))
            }
        }
        return out
    }
    // The dataset's own fitted values, to compare against.
    var shipped: [String: (a: Double, n: Double)] = [:]
    if let yaml = try? String(contentsOfFile: directory + "/sightings/receivers.yaml", encoding: .utf8) {
        var id = ""
        for line in yaml.split(separator: "\n") {
            let t = line.trimmingCharacters(in: .whitespaces)
            if t.hasPrefix("- id: ") { id = String(t.dropFirst(6)) }
            if t.hasPrefix("rssi_at_1m: "), let v = Double(t.dropFirst(12)) { shipped[id, default: (0, 0)].a = v }
            if t.hasPrefix("path_loss_exponent: "), let v = Double(t.dropFirst(20)) {
                shipped[id, default: (0, 0)].n = v
            }
        }
    }
    let all = samples { _ in true }
    let fits = RSSICalibration.fit(all)
    print("calibration: kolakowski flat, \(fingerprints.count) fingerprints, \(all.count) anchor readings")
    print("  anchor   A fitted / shipped   n fitted / shipped   rms before (-59, 2.0) -> after (dB)")
    for f in fits {
        let s = shipped[f.receiver]
        print(
            "  \(f.receiver)  \(String(format: "%6.1f", f.rssiAt1m)) / \(s.map { String(format: "%6.1f", $0.a) } ?? "  -  ")"
                + "      \(String(format: "%4.2f", f.pathLossExponent)) / \(s.map { String(format: "%4.2f", $0.n) } ?? "  - ")"
                + "          \(String(format: "%4.2f", f.rmsBefore)) -> \(String(format: "%4.2f", f.rmsAfter))")
    }
    // Ten spots, as `beaconctl calibrate record` takes them: ten stretches of the robot's path
    // (30 consecutive fingerprints each, ~10 s), evenly spread over the recording.
    let stride = max(1, fingerprints.count / 10)
    let spots = samples { ($0 % stride) < 30 }
    let tenFits = RSSICalibration.fit(spots)
    print(
        "  from 10 spots (\(spots.count) readings): "
            + tenFits.map {
                "\($0.receiver) \(String(format: "%.1f", $0.rssiAt1m))/\(String(format: "%.2f", $0.pathLossExponent))"
            }
            .joined(separator: ", "))
    let deltas = tenFits.compactMap { f in
        fits.first { $0.receiver == f.receiver }.map {
            (abs(f.rssiAt1m - $0.rssiAt1m), abs(f.pathLossExponent - $0.pathLossExponent))
        }
    }
    if !deltas.isEmpty {
        print(
            "  10 spots vs all: |dA| max \(String(format: "%.1f", deltas.map(\.0).max()!)) dB, |dn| max \(String(format: "%.2f", deltas.map(\.1).max()!))"
        )
    }
}
