import Foundation
import TestSupport
import Testing

/// An edit that "does nothing": the file changed but the daemon was not reloaded, or a
/// reload left sections for a restart. `beaconctl doctor` says which.
@Suite(.serialized) struct ConfigDriftTests {
    func doctor(_ d: APIDaemon) throws -> String {
        try runCommand(Executables.built("beaconctl"), ["--socket", d.socketPath, "doctor"]).stdout
    }

    func reload(_ d: APIDaemon, count: Int) throws {
        kill(d.daemon!.process.processIdentifier, SIGHUP)
        try d.daemon!.waitUntil("reload \(count)") { _, logs in
            logs.filter { $0.contains("config.reloaded") }.count == count
        }
    }

    @Test func doctorWarnsOfAFileTheDaemonDoesNotRun() throws {
        let d = try APIDaemon(extra: ReloadTests.regions([1]))
        try d.start()
        #expect(try doctor(d).contains("[ok] config: \(d.configPath) is valid and is what the daemon runs"))

        try d.rewrite(extra: ReloadTests.regions([1, 2]))
        let edited = try doctor(d)
        #expect(
            edited.contains("[WARN] config: \(d.configPath) is valid but changed since the daemon loaded it"),
            "\(edited)")
        #expect(edited.contains("fix: systemctl reload beacond"))

        try reload(d, count: 1)
        #expect(try doctor(d).contains("[ok] config: \(d.configPath) is valid and is what the daemon runs"))

        // A section a reload cannot apply: loaded, but waiting for a restart.
        let text = try String(contentsOfFile: d.configPath, encoding: .utf8)
        try text.replacingOccurrences(of: "id: api-test", with: "id: renamed").write(
            toFile: d.configPath, atomically: true, encoding: .utf8)
        try reload(d, count: 2)
        let pending = try doctor(d)
        #expect(
            pending.contains("[WARN] config: \(d.configPath) is loaded, but its gateway section(s) wait for a restart"),
            "\(pending)")
        let status = try d.client.request("GET", "/v1/status").object
        #expect(status["config_needs_restart"] as? [String] == ["gateway"])
        #expect(d.stop() == 0)
    }
}
