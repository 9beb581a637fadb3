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
            pending.contains(
                "[WARN] config: \(d.configPath) is loaded, but changed settings wait for a restart: gateway.id"),
            "\(pending)")
        let status = try d.client.request("GET", "/v1/status").object
        #expect(status["config_needs_restart"] as? [String] == ["gateway.id"])
        #expect(d.stop() == 0)
    }
}

/// What a reload applies at once that used to wait for a restart: the log level, and who may
/// change things through the API.
@Suite(.serialized) struct LiveSettingsReloadTests {
    func edit(_ d: APIDaemon, _ from: String, _ to: String) throws {
        let text = try String(contentsOfFile: d.configPath, encoding: .utf8)
        #expect(text.contains(from))
        try text.replacingOccurrences(of: from, with: to).write(
            toFile: d.configPath, atomically: true, encoding: .utf8)
    }

    func reload(_ d: APIDaemon, until event: String, _ fields: [String: String] = [:]) throws {
        kill(d.daemon!.process.processIdentifier, SIGHUP)
        try d.daemon!.waitUntil(event) { _, logs in logs.contains { $0.isLog(event, fields) } }
    }

    /// A refused reload logs an error at any level, after everything logged before it (the log
    /// is one pipe): once it is in, so is anything the reloads before it logged.
    func everythingLogged(_ d: APIDaemon) throws {
        try edit(d, "gateway:", "gateway: {bad")
        try reload(d, until: "config.reload_refused")
    }

    @Test func theLogLevelFollowsAReload() throws {
        let d = try APIDaemon()
        try edit(d, "id: api-test,", "id: api-test, log_level: warning,")
        try d.start()
        #expect(!d.daemon!.logs.contains { $0.contains("api.listening") }, "info is below warning")

        try edit(d, "log_level: warning", "log_level: debug")
        try reload(d, until: "config.reloaded")
        #expect(d.daemon!.logs.contains { $0.isLog("config.log_level", ["to": "debug", "was": "warning"]) })
        #expect(!d.daemon!.logs.contains { $0.contains("config.needs_restart") })
        #expect(!d.daemon!.logs.contains { $0.contains("config.reloading") }, "logged at info, before the change")

        try edit(d, "log_level: debug", "log_level: warning")
        try reload(d, until: "config.log_level", ["to": "warning", "was": "debug"])
        try everythingLogged(d)
        #expect(d.daemon!.logs.filter { $0.contains("config.reloading") }.count == 1, "at debug, before the change")
        #expect(d.daemon!.logs.filter { $0.contains("config.reloaded") }.count == 1, "\(d.daemon!.logs)")
        #expect(d.stop() == 0)
    }

    @Test func theCommandLinesLogLevelWinsOverTheFiles() throws {
        let d = try APIDaemon()
        try d.start(arguments: ["--log-level", "warning"])
        try edit(d, "id: api-test,", "id: api-test, log_level: debug,")
        try reload(d, until: "config.log_level_kept", ["running": "warning", "file_level": "debug"])
        try everythingLogged(d)
        #expect(!d.daemon!.logs.contains { $0.contains("config.reloaded") }, "still at warning")
        #expect(d.stop() == 0)
    }
}
