import Foundation
import TestSupport
import Testing

/// Under systemd, beacond's log lines reach a real systemd-journald (a private one in a
/// mount namespace of its own) with their priorities and BEACOND_ fields, and nothing is
/// written twice to standard error. Namespaces need root.
@Suite struct JournalTests {
    static let journald = "/lib/systemd/systemd-journald"

    @Test(.enabled(if: getuid() == 0 && FileManager.default.fileExists(atPath: journald)))
    func logLinesReachARunningJournaldWithPrioritiesAndFields() throws {
        let dir = try Executables.temporaryDirectory()
        let config = dir.appendingPathComponent("beacond.yaml")
        try """
        gateway: {id: journal-test, state_dir: \(dir.path)/state}
        api: {socket: \(dir.path)/api.sock}
        clients: [{id: app, regions: [{id: store, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0}]}]

        """.write(to: config, atomically: true, encoding: .utf8)
        let script = Executables.packageRoot.appendingPathComponent("Tests/DaemonTests/Support/private_journald.sh")
        let run = try runCommand(
            URL(fileURLWithPath: "/usr/bin/unshare"),
            [
                "-m", "--propagation", "private", "/bin/sh", script.path, dir.path, "2",
                Executables.built("beacond").path, "--no-print-events", "--config", config.path,
            ],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(dir.path)/no-bus", "PATH": "/usr/bin:/bin"])
        #expect(run.status == 0, "\(run.stderr)")
        let entries = run.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        func entry(_ event: String) -> [String: Any]? { entries.first { $0["BEACOND_EVENT"] as? String == event } }
        let started = entry("beacond.started")
        #expect(started?["PRIORITY"] as? String == "6")
        #expect(started?["BEACOND_GATEWAY"] as? String == "journal-test")
        #expect((started?["MESSAGE"] as? String)?.hasPrefix("event=beacond.started") == true)
        #expect((started?["CODE_FILE"] as? String)?.hasSuffix(".swift") == true, "through the swift-log handler")
        let noBus = entry("dbus.unavailable")
        #expect(noBus?["PRIORITY"] as? String == "4", "a warning, at warning priority")
        // Issue 26: each value whole, spaces and all (it was cut at the first space).
        let error = noBus?["BEACOND_ERROR"] as? String ?? ""
        #expect(
            error.contains(" ") && (noBus?["MESSAGE"] as? String)?.contains("error=\"\(error)\"") == true, "\(error)")
        #expect(entry("beacond.stopped") != nil, "the orderly stop after SIGTERM is logged")
        #expect(!entries.contains { $0["PRIORITY"] as? String == "7" }, "no debug lines at the default level")
        let stderr = try String(contentsOf: dir.appendingPathComponent("stderr"), encoding: .utf8)
        #expect(stderr.isEmpty, "lines went to the journal, not also to stderr: \(stderr)")
    }
}
