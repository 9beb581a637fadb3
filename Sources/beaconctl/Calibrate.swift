import APIModel
import ArgumentParser
import BeaconConfig
import BeaconCore
import BeaconRuntime
import POSIX

#if canImport(Glibc)
    import Glibc
#endif

/// `beaconctl calibrate`: fits each receiver's `rssi_at_1m` and `path_loss_exponent` from a
/// reference tag held at known spots (docs/positioning.md, "Calibrating a store"). `record`
/// reads what every receiver hears of the tag at one spot; `fit` fits the model to all the
/// spots recorded and prints the YAML to paste, with how much better it fits.
struct Calibrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fit each receiver's rssi_at_1m and path_loss_exponent from a reference tag at known spots.",
        discussion: """
            With --auto, no one walks: the gateways advertise as beacons (calibration.advertise: true), \
            each receiver hears the others at the distances the receivers' positions give, and the \
            daemon fits every receiver to what it heard.
            """,
        subcommands: [Record.self, Fit.self])

    @OptionGroup var common: Common
    @Flag(help: "Fit each receiver to the other receivers' calibration advertisements (calibration.advertise).")
    var auto = false
    @Option(
        help:
            "With --auto: forget what was heard, then listen this many seconds before fitting (0: fit what was heard so far)."
    )
    var fresh = 0

    func run() throws {
        guard auto else { throw CleanExit.helpRequest(self) }
        var answer = JSONValue.null
        try common.run { api throws(APIClient.Failure) in
            if fresh > 0 {
                _ = try api.request("DELETE", "/v1/calibration")
                writeOut("listening \(fresh) s to the receivers' calibration advertisements…")
                sleep(UInt32(fresh))
            }
            answer = try api.get("/v1/calibration")
        }
        if common.json {
            writeOut(answer.serialized)
            return
        }
        var pairs = Table("HEARER", "ADVERTISER", "DISTANCE_M", "SAMPLES", "MEAN_RSSI", "SD_DB")
        for p in answer.array("pairs") {
            pairs.add(
                p.string("hearer") ?? "?", p.string("advertiser") ?? "?", FloorMap.number(p.double("distance_m") ?? 0),
                "\(p.int("samples"))", FloorMap.number(p.double("mean_rssi") ?? 0),
                FloorMap.number(p.double("sd_db") ?? 0))
        }
        let advertising = answer.array("advertising").compactMap(\.stringValue)
        let here = advertising.isEmpty ? "none" : advertising.joined(separator: ", ")
        writeOut("advertising here: \(here) · heard since \(answer.string("since") ?? "?")")
        writeOut(pairs.text, terminator: "")
        let fits = answer.array("fits").compactMap(RSSICalibration.Fit.init(json:))
        guard !fits.isEmpty else {
            printError(
                "beaconctl: no receiver has heard another's calibration advertisement "
                    + "\(Int(answer.double("minimum_samples") ?? 5)) times yet; with calibration.advertise: true on every "
                    + "gateway, wait a minute (or give --fresh 120)")
            throw ExitCode(1)
        }
        writeOut("")
        Fit.report(fits, unit: "PAIRS")
    }

    /// `beaconctl calibrate record --asset TAG --at X,Y`: one spot.
    struct Record: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Record what each receiver hears of a tag held at a known spot (appends to the samples file).")
        @OptionGroup var common: Common
        @Option(help: "The reference tag: an asset of the configuration.") var asset: String
        @Option(help: "Where the tag is: x,y in the site's metres.") var at: String
        @Option(help: "The tag's height above the floor (m), against the receivers' z.") var height = 1.0
        @Option(help: "How long to record (s); each second's reading of each receiver is one sample.")
        var seconds = 30
        @Option(help: "The samples file (JSON Lines), appended to.") var out = "calibration.jsonl"

        func run() throws {
            let parts = at.split(separator: ",").compactMap { Double($0.trimmingWhitespace) }
            guard parts.count == 2 else { throw ValidationError("--at: expected x,y in metres, got \"\(at)\"") }
            var lines: [String] = []
            var tally: [String: (n: Int, sum: Double, distance: Double)] = [:]
            try common.run { api throws(APIClient.Failure) in
                for second in 0..<max(1, seconds) {
                    if second > 0 { sleep(1) }
                    let answer = try api.get("/v1/assets/\(percentEncode(asset))/readings")
                    for r in AssetReadings(json: answer).readings where r.ageSeconds < 1.5 {
                        let (id, rssi) = (r.receiver, r.rssi)
                        let dz = (r.z ?? height) - height
                        let dx = r.x - parts[0], dy = r.y - parts[1]
                        let distance = max(0.1, (dx * dx + dy * dy + dz * dz).squareRoot())
                        lines.append(
                            JSONValue.object([
                                ("receiver", .string(id)), ("distance", .round(distance, places: 1000)),
                                ("rssi", .round(rssi, places: 10)), ("x", .number(parts[0])), ("y", .number(parts[1])),
                            ]).serialized)
                        let t = tally[id] ?? (0, 0, distance)
                        tally[id] = (t.n + 1, t.sum + rssi, distance)
                    }
                }
            }
            guard appendLines(lines, to: out) else {
                printError("beaconctl: cannot append to \(out): \(String(cString: strerror(errno)))")
                throw ExitCode(1)
            }
            var t = Table("RECEIVER", "DISTANCE_M", "SAMPLES", "MEAN_RSSI")
            for (id, v) in tally.sorted(by: { $0.key < $1.key }) {
                t.add(id, FloorMap.number(v.distance), "\(v.n)", FloorMap.number(v.sum / Double(v.n)))
            }
            writeOut(t.text, terminator: "")
            writeOut("\(lines.count) samples at (\(parts[0]), \(parts[1])) appended to \(out)")
            if tally.isEmpty { throw ExitCode(1) }
        }
    }

    /// `beaconctl calibrate fit`: the model fitted to every spot recorded.
    struct Fit: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Fit each receiver to the recorded samples and print the YAML to paste into receivers:.")
        @Option(help: "The samples file written by calibrate record.") var samples = "calibration.jsonl"
        @Option(help: "The configuration whose receivers' calibrations are compared (the fit's 'before').")
        var config = Doctor.defaultConfig

        func run() throws {
            let text: String
            do {
                text = try readTextFile(samples)
            } catch {
                printError("beaconctl: \(error)")
                throw ExitCode(66)
            }
            var list: [RSSICalibration.Sample] = []
            for line in text.split(separator: "\n") {
                guard let v = try? JSONParser.parse(String(line)), let id = v.string("receiver"),
                    let d = v.double("distance"), let rssi = v.double("rssi")
                else { continue }
                list.append(.init(receiver: id, distance: d, rssi: rssi))
            }
            var previous: [String: ReceiverCalibration] = [:]
            if let yaml = try? readTextFile(config), let loaded = try? ConfigLoader.load(yaml: yaml, file: config) {
                for r in loaded.receivers {
                    previous[r.id] = ReceiverCalibration(rssiAt1m: r.rssiAt1m, pathLossExponent: r.pathLossExponent)
                }
            }
            let fits = RSSICalibration.fit(list, previous: previous)
            guard !fits.isEmpty else {
                printError("beaconctl: no samples in \(samples); record some with beaconctl calibrate record")
                throw ExitCode(1)
            }
            Self.report(fits, unit: "SAMPLES")
        }

        /// The fits as a table, then the YAML to paste.
        static func report(_ fits: [RSSICalibration.Fit], unit: String) {
            var t = Table("RECEIVER", unit, "RSSI_AT_1M", "EXPONENT", "RMS_BEFORE_DB", "RMS_AFTER_DB")
            for f in fits {
                t.add(
                    f.receiver, "\(f.samples)", FloorMap.number(f.rssiAt1m),
                    FloorMap.number(f.pathLossExponent) + (f.exponentFitted ? "" : " (kept)"),
                    FloorMap.number(f.rmsBefore), FloorMap.number(f.rmsAfter))
            }
            writeOut(t.text, terminator: "")
            writeOut("\n# In receivers:, each receiver's calibration (its position as it is):")
            for f in fits {
                writeOut(
                    "#   - id: \(f.receiver)\n      rssi_at_1m: \(Self.decimal(f.rssiAt1m))\n"
                        + "      path_loss_exponent: \(Self.decimal(f.pathLossExponent, places: 100))")
            }
        }

        static func decimal(_ v: Double, places: Double = 10) -> String {
            let r = (v * places).rounded() / places
            return r == r.rounded() ? "\(Int(r)).0" : "\(r)"
        }
    }
}

/// Appends lines to a file (created 0644 if missing); false when it cannot.
func appendLines(_ lines: [String], to path: String) -> Bool {
    let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return lines.isEmpty || writeAll(fd: fd, lines.joined(separator: "\n") + "\n")
}
