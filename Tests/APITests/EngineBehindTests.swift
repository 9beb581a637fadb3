import Foundation
import TestSupport
import Testing

/// An engine held up — here by another process holding the state file's write lock, as an
/// operator's `sqlite3` shell with a transaction open does — while a relay keeps sending:
/// once 50,000 sightings wait, the relay is told 503 and the rest are dropped and counted;
/// `beaconctl doctor` warns, and when the lock goes the daemon catches up and delivers.
@Suite(.serialized) struct EngineBehindTests {
    /// Holds `BEGIN EXCLUSIVE` on the file until its standard input closes.
    static let holdLock = """
        import sqlite3, sys
        c = sqlite3.connect(sys.argv[1], isolation_level=None)
        c.execute("BEGIN EXCLUSIVE")
        print("locked", flush=True)
        sys.stdin.read()
        c.execute("ROLLBACK")
        """

    @Test func aHeldUpEngineIsToldByTheRelayAnswerAndByDoctor() throws {
        let receiver = try WebhookReceiver()
        let d = try WebhookDeliveryTests.daemon(regions: 2, webhook: receiver)
        try d.start()
        try d.post([APIDaemon.sighting(major: 1)])
        try receiver.waitUntil("the first event") { _ in receiver.acceptedIDs.count == 1 }

        let lock = Process()
        lock.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        lock.arguments = ["-c", Self.holdLock, d.dir.appendingPathComponent("state/beacond.sqlite").path]
        let input = Pipe()
        let output = Pipe()
        lock.standardInput = input
        lock.standardOutput = output
        try lock.run()
        defer { if lock.isRunning { lock.terminate() } }
        let said = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        try #require(said.hasPrefix("locked"), "\(said)")

        // An enter to write: the engine waits on the lock while the relay sends.
        try d.post([APIDaemon.sighting(major: 2)])
        let batch = (0..<5_000).map { APIDaemon.sighting(major: 3 + $0 % 200, minor: $0) }
        var answers: [Int] = []
        while answers.last != 503 && answers.count < 40 {
            answers.append(try d.client.request("POST", "/v1/sightings", body: batch.joined(separator: "\n")).status)
        }
        #expect(answers.last == 503, "\(answers)")

        try input.fileHandleForWriting.close()
        lock.waitUntilExit()
        try receiver.waitUntil("r2, once the lock is gone", timeout: 30) { _ in receiver.acceptedIDs.count == 2 }
        let status = try d.waitForStatus("the engine answering") { $0["counts"] != nil }
        let dropped = (status["counts"] as? [String: Any])?["engine_behind"] as? Int ?? 0
        #expect(dropped >= 5_000, "\(status)")
        let doctor = try runCommand(
            Executables.built("beaconctl"), ["--socket", d.socketPath, "doctor", "--config", d.configPath])
        #expect(
            doctor.stdout.contains("[WARN] engine: \(dropped) sightings dropped since the daemon started"),
            "\(doctor.stdout)")
        #expect(d.stop() == 0)
        #expect(d.daemon!.logs.contains { $0.contains("warning: engine.behind sightings_dropped=") })
    }
}
