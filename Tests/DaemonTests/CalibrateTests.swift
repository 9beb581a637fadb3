import Foundation
import TestSupport
import Testing

/// `beaconctl calibrate` against the real daemon: reference tags held at five known spots,
/// heard by four receivers as a radio with its own measured power (−52 dBm) and exponent
/// (2.5) would hear them; `record` reads each spot, `fit` gives the radios' model back and
/// says how much better it fits than the configuration's default.
@Suite(.serialized) struct CalibrateTests {
    static let receivers: [(String, Double, Double)] = [("r1", 0, 0), ("r2", 10, 0), ("r3", 10, 10), ("r4", 0, 10)]
    static let spots: [(String, Double, Double)] = [
        ("ref-a", 1.5, 1.0), ("ref-b", 5, 5), ("ref-c", 8.5, 1.5), ("ref-d", 1.5, 8.5), ("ref-e", 8.5, 8.5),
    ]

    @Test func recordAtFiveSpotsThenFitGivesTheRadiosModelBack() throws {
        let d = try APIDaemon(
            extra: "receivers:\n"
                + Self.receivers.map { "  - {id: \($0.0), position: {x: \($0.1), y: \($0.2)}}\n" }.joined()
                + "assets:\n"
                + Self.spots.enumerated().map {
                    "  - {id: \($1.0), beacon: {address: \"D0:00:00:00:00:0\($0 + 1)\"}}\n"
                }.joined())
        try d.start()
        let now = Date().timeIntervalSince1970
        var lines: [String] = []
        for (i, spot) in Self.spots.enumerated() {
            for (id, x, y) in Self.receivers {
                let distance = ((x - spot.1) * (x - spot.1) + (y - spot.2) * (y - spot.2)).squareRoot()
                let rssi = Int((-52 - 25 * log10(distance)).rounded())
                for k in 0..<3 {
                    lines.append(
                        "{\"t\":\(String(format: "%.3f", now + Double(k) * 0.01)),\"receiver\":\"\(id)\","
                            + "\"address\":\"D0:00:00:00:00:0\(i + 1)\",\"rssi\":\(rssi)}")
                }
            }
        }
        try d.post(lines)
        _ = try d.waitForSightings(lines.count)
        let samples = d.dir.appendingPathComponent("calibration.jsonl").path
        for (asset, x, y) in Self.spots {
            let record = try runCommand(
                Executables.built("beaconctl"),
                [
                    "calibrate", "record", "--socket", d.socketPath, "--asset", asset, "--at", "\(x),\(y)", "--seconds",
                    "1",
                    "--out", samples,
                ])
            #expect(
                record.status == 0 && record.stdout.contains("4 samples at (\(x), \(y)) appended"),
                "\(record.stdout)\(record.stderr)")
        }
        let fit = try runCommand(
            Executables.built("beaconctl"), ["calibrate", "fit", "--samples", samples, "--config", d.configPath])
        #expect(fit.status == 0, "\(fit.stderr)")
        // Each receiver's row: RECEIVER SAMPLES RSSI_AT_1M EXPONENT RMS_BEFORE RMS_AFTER
        for (id, _, _) in Self.receivers {
            let row = fit.stdout.split(separator: "\n").first { $0.hasPrefix(id + " ") }?.split(separator: " ")
            let a = Double(row?[2] ?? "") ?? 0, n = Double(row?[3] ?? "") ?? 0
            let before = Double(row?[4] ?? "") ?? 0, after = Double(row?[5] ?? "") ?? 99
            #expect(abs(a - -52) < 1 && abs(n - 2.5) < 0.15, "\(id): \(fit.stdout)")
            #expect(after < 0.6 && before > after + 2, "\(id): \(fit.stdout)")
        }
        #expect(fit.stdout.contains("#   - id: r1\n      rssi_at_1m: -5"), "\(fit.stdout)")
        let unknown = try runCommand(
            Executables.built("beaconctl"),
            [
                "calibrate", "record", "--socket", d.socketPath, "--asset", "nope", "--at", "1,1", "--seconds", "1",
                "--out", samples,
            ])
        #expect(unknown.status == 1 && unknown.stderr.contains("no asset \"nope\""))
        #expect(d.stop() == 0)
    }
}

/// `calibrate --auto` on a simulated site: the simulator sends every receiver's calibration
/// advertisement through its channel, the daemon tallies what the others hear, and beaconctl
/// prints the pairs and the fit, after forgetting what was heard with `--fresh`.
@Suite(.serialized) struct SimulatedAutoCalibrationTests {
    @Test func theSimulatedReceiversAreFittedToEachOther() throws {
        let d = try APIDaemon(
            extra: """
                receivers:
                  - {id: west, position: {x: 2, y: 5}}
                  - {id: mid, position: {x: 10, y: 5}}
                  - {id: east, position: {x: 18, y: 5}}
                  - {id: far, position: {x: 10, y: 18}}
                assets:
                  - {id: tag, beacon: {address: "D0:5E:00:00:00:01"}}
                calibration: {advertise: true}
                simulation: {floor: {width: 20, depth: 20}, sigma_db: 2, packet_loss: 0.1}

                """)
        try d.start(arguments: ["--simulate", "--no-print-events"])
        let ctl = try runCommand(
            Executables.built("beaconctl"), ["calibrate", "--auto", "--fresh", "3", "--socket", d.socketPath])
        #expect(ctl.status == 0, "\(ctl.stdout)\(ctl.stderr)")
        // Four receivers on one floor: 12 pairs, each heard at 5 Hz for 3 s.
        let ids: Set<Substring> = ["west", "mid", "east", "far"]
        let pairs = ctl.stdout.split(separator: "\n").filter { line in
            let words = line.split(separator: " ")
            return words.count == 6 && ids.contains(words[0]) && ids.contains(words[1])
        }
        #expect(pairs.count == 12, "\(ctl.stdout)")
        #expect(ctl.stdout.contains("west    east        16"), "\(ctl.stdout)")
        for id in ["west", "mid", "east", "far"] { #expect(ctl.stdout.contains("#   - id: \(id)\n")) }
        #expect(d.stop() == 0)
    }
}
