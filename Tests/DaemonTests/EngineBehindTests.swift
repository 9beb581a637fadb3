import Foundation
import TestSupport
import Testing

/// What holds the engine up, and what an operator is told of it.
///
/// - Another process holding the state file's write lock (an operator's `sqlite3` shell with a
///   transaction open) must not: the engine's writes give up on the lock within 200 ms and
///   their events are held, as on a full disk, so the radios' sightings keep being handled.
/// - An engine that does get stuck (`BEACOND_FAULT_WEDGE_ENGINE_AFTER`) is told: the relay's
///   answer turns 503 once 50,000 sightings wait, `/v1/status` still answers and says since
///   when the engine has not turned, and `beaconctl doctor` fails it.
@Suite(.serialized) struct EngineBehindTests {
    static let batch = (0..<5_000).map { APIDaemon.sighting(major: 3 + $0 % 200, minor: $0) }.joined(separator: "\n")

    @Test func aStateFileLockedByAnotherProcessHoldsEventsButNotTheEngine() throws {
        let receiver = try WebhookReceiver()
        let d = try WebhookDeliveryTests.daemon(regions: 2, webhook: receiver)
        try d.start()
        try d.post([APIDaemon.sighting(major: 1)])
        try receiver.waitUntil("the first event") { _ in receiver.acceptedIDs.count == 1 }

        let lock = try StateFileLock(path: d.dir.appendingPathComponent("state/beacond.sqlite").path)
        defer { lock.release() }

        // An enter to write while the lock is held, and 200,000 sightings after it.
        try d.post([APIDaemon.sighting(major: 2)])
        var answers: [Int] = []
        for _ in 0..<40 {
            answers.append(try d.client.request("POST", "/v1/sightings", body: Self.batch).status)
        }
        #expect(answers.allSatisfy { $0 == 202 }, "\(answers)")
        let held = try d.waitForStatus("the enter held") {
            ($0["counts"] as? [String: Any])?["events_held"] as? Int == 1
        }
        #expect((held["counts"] as? [String: Any])?["engine_behind"] as? Int == 0, "\(held)")
        #expect(receiver.acceptedIDs.count == 1)
        #expect(d.daemon!.logs.contains { $0.contains("state.write_failed") && $0.contains("another process holds") })

        lock.release()
        try receiver.waitUntil("r2, once the lock is gone", timeout: 30) { _ in receiver.acceptedIDs.count == 2 }
        let status = try d.waitForStatus("nothing held") {
            ($0["counts"] as? [String: Any])?["events_held"] as? Int == 0
        }
        #expect((status["counts"] as? [String: Any])?["engine_behind"] as? Int == 0, "\(status)")
        #expect(d.stop() == 0)
    }

    @Test func aStuckEngineIsToldByTheRelayByStatusAndByDoctor() throws {
        let receiver = try WebhookReceiver()
        let d = try WebhookDeliveryTests.daemon(regions: 2, webhook: receiver)
        try d.start(environment: ["BEACOND_FAULT_WEDGE_ENGINE_AFTER": "3"])
        try d.post([APIDaemon.sighting(major: 1)])
        try receiver.waitUntil("the first event") { _ in receiver.acceptedIDs.count == 1 }
        try d.waitForStatus("the engine stuck") { Self.turnAge($0) >= 1 }

        var answers: [Int] = []
        while answers.last != 503 && answers.count < 40 {
            answers.append(try d.client.request("POST", "/v1/sightings", body: Self.batch).status)
        }
        #expect(answers.last == 503, "\(answers)")

        // Answered while the engine is stuck, and saying so.
        let status = try d.waitForStatus("stuck for 10 s", timeout: 20) { Self.turnAge($0) >= 10 }
        let dropped = (status["counts"] as? [String: Any])?["engine_behind"] as? Int ?? 0
        #expect(dropped >= 5_000, "\(status)")
        #expect(try d.client.request("GET", "/metrics").body.contains("beacond_engine_last_turn_timestamp_seconds "))
        let shown = try runCommand(Executables.built("beaconctl"), ["--socket", d.socketPath, "status"])
        #expect(shown.stdout.contains("engine    has not run for "), "\(shown.stdout)")
        let doctor = try runCommand(
            Executables.built("beaconctl"), ["--socket", d.socketPath, "doctor", "--config", d.configPath])
        #expect(doctor.status == 1)
        #expect(doctor.stdout.contains("[FAIL] engine: has not run for "), "\(doctor.stdout)")
        #expect(doctor.stdout.contains("\(dropped) sightings dropped since the daemon started"), "\(doctor.stdout)")

        // What needs the engine is refused at once, saying why, rather than holding the API's
        // one thread (and with it every other client) while it waits for an answer.
        for (method, path) in [
            ("GET", "/v1/beacons"), ("GET", "/v1/clients/app/regions"), ("GET", "/v1/clients"),
            ("POST", "/v1/clients/app/regions/r1/request-state"),
        ] {
            let answer = try d.client.request(method, path)
            #expect(answer.status == 503, "\(method) \(path)")
            let message = (answer.object["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.contains("the engine has not run for") && message.contains("not waiting"), "\(message)")
        }
        d.crash()
    }

    static func turnAge(_ status: [String: Any]) -> Double {
        ((status["engine"] as? [String: Any])?["last_turn_age_s"] as? NSNumber)?.doubleValue ?? 0
    }
}
