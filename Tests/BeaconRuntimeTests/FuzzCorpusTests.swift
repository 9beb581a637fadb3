import Foundation
import TestSupport
import Testing

/// Every input the fuzzer kept (fuzz/corpus) and every crash it found (fuzz/crashes-fixed),
/// run again through the same parsers and engine: a crash found once stays fixed.
@Suite struct FuzzCorpusTests {
    @Test(arguments: [
        "sightings", "config", "http", "api", "dbus", "sighting-reader", "site-batch", "espresense", "openmqttgateway",
        "esphome",
    ])
    func everyKeptInputRunsWithoutATrap(target: String) throws {
        let root = Executables.packageRoot.appendingPathComponent("fuzz")
        var dirs: [String] = []
        var inputs = 0
        // The differential target starts from the sightings corpus (fuzz/run gives it both).
        let corpora =
            target == "sighting-reader" ? ["corpus/sightings", "corpus/sighting-reader"] : ["corpus/\(target)"]
        for dir in corpora + ["crashes-fixed/\(target)"] {
            let path = root.appendingPathComponent(dir).path
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { continue }
            dirs.append(path)
            inputs += names.filter { !$0.hasPrefix(".") }.count
        }
        #expect(inputs > 0, "no fuzz inputs for \(target)")
        let out = try runCommand(Executables.built("beacond-fuzz"), [target] + dirs)
        #expect(out.status == 0, "\(out.stderr.prefix(2000))")
        #expect(out.stdout.contains("\(target): \(inputs) inputs ran"), "\(out.stdout)")
    }
}
