import Foundation
import TestSupport
import Testing

/// Issue 51, item 2: a gateway whose libmosquitto cannot be used trapped (`fatalError`), and
/// under `Restart=on-failure` that is a crash loop; `beaconctl doctor` trapped too, on the very
/// fault it exists to report. Here the library found first is one that has none of its
/// functions (a stub built here, first on `LD_LIBRARY_PATH`): the daemon exits 72, which the
/// unit does not restart on, naming the package; doctor fails the check with the fix.
@Suite struct MissingLibraryTests {
    /// A directory holding a `libmosquitto.so.1` with none of libmosquitto's functions.
    static func brokenMosquitto() throws -> URL {
        let dir = try Executables.temporaryDirectory()
        let source = dir.appendingPathComponent("stub.c")
        try "int beacond_not_mosquitto(void) { return 0; }\n".write(to: source, atomically: true, encoding: .utf8)
        let built = try runCommand(
            URL(fileURLWithPath: "/usr/bin/gcc"),
            ["-shared", "-fPIC", "-o", dir.appendingPathComponent("libmosquitto.so.1").path, source.path])
        try #require(built.status == 0, "gcc: \(built.stderr)")
        return dir
    }

    static let site = """
        site:
          id: store-1
          mqtt: {url: "mqtt://127.0.0.1:1", keepalive: 5s}

        """

    @Test func aSiteWithoutLibmosquittoExits72AndSaysWhatToInstall() throws {
        let stub = try Self.brokenMosquitto()
        let d = try APIDaemon(extra: Self.site, gatewayID: "gw1")
        try d.start(environment: ["LD_LIBRARY_PATH": stub.path], waitForSocket: false)
        let daemon = try #require(d.daemon)
        try eventually("the daemon to exit", timeout: 20) { !daemon.process.isRunning }
        let status = daemon.stop()
        let logs = daemon.logs.joined(separator: "\n")
        #expect(status == 72, "\(logs)")
        #expect(daemon.process.terminationReason == .exit, "ended by a signal: \(logs)")
        #expect(logs.contains("site.mqtt_unavailable"), "\(logs)")
        #expect(logs.contains("libmosquitto.so.1 has no mosquitto_"), "\(logs)")
        #expect(logs.contains("apt install libmosquitto1"), "\(logs)")

        let unit = try String(
            contentsOf: Executables.packageRoot.appendingPathComponent("systemd/beacond.service"), encoding: .utf8)
        let prevent = unit.split(separator: "\n").first { $0.hasPrefix("RestartPreventExitStatus=") } ?? ""
        #expect(prevent.split(separator: "=").last?.split(separator: " ").contains("72") == true, "\(prevent)")

        let doctor = try runCommand(
            Executables.built("beaconctl"),
            ["--socket", d.socketPath, "doctor", "--config", d.configPath, "--rfkill-dir", stub.path],
            environment: ["LD_LIBRARY_PATH": stub.path, "PATH": "/usr/bin:/bin"])
        #expect(doctor.status == 1, "\(doctor.stdout)\(doctor.stderr)")
        #expect(
            doctor.stdout.contains("[FAIL] libmosquitto: libmosquitto.so.1 has no mosquitto_"),
            "\(doctor.stdout)\(doctor.stderr)")
        #expect(doctor.stdout.contains("fix: apt install libmosquitto1"), "\(doctor.stdout)")
        #expect(doctor.stdout.contains("[ok] libcurl: libcurl.so.4 loads"), "\(doctor.stdout)")
    }
}
