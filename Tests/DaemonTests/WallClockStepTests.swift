import Foundation
import TestSupport
import Testing

/// The real daemon with its wall clock set an hour forward while it runs, as NTP does to a
/// gateway without a battery-backed clock that booted hours behind. libfaketime moves
/// `CLOCK_REALTIME` (read from a file on every call) and leaves `CLOCK_BOOTTIME` alone, as a
/// real `clock_settime` does. The daemon is started through `/usr/bin/env`, which loads
/// libfaketime first: its set-up changes the environment, and done in the daemon's own process
/// before the Swift runtime has found `argv`, that leaves no arguments (swiftlang/swift#76080).
@Suite(.serialized) struct WallClockStepTests {
    static let libfaketime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
    static let oneRegion = """
        clients:
          - id: app
            regions:
              - {id: store, uuid: \(APIDaemon.uuid)}

        """

    @Test func settingTheClockAnHourForwardExitsNoRegion() throws {
        let (d, offset) = try Self.startedInsideTheRegion()
        // The clock is set an hour forward; the engine turns at least once a second
        try "+3600\n".write(toFile: offset, atomically: true, encoding: .utf8)
        var warnings: [String] = []
        try? eventually("clock.step in last_errors") {
            warnings = try d.client.request("GET", "/v1/status").object["last_errors"] as? [String] ?? []
            return warnings.contains { $0.contains("clock.step") }
        }
        #expect(warnings.contains { $0.isLog("clock.step", ["by_s": "3600"]) }, "\(warnings)")
        // The beacon is heard on the new clock: the region stayed inside all along
        try d.post([APIDaemon.sighting(major: 7, clockAhead: 3600)])
        let regions = try d.client.request("GET", "/v1/clients/app/regions").object["regions"] as? [[String: Any]]
        #expect(regions?.first?["state"] as? String == "inside")
        let kinds = try d.history().compactMap { $0["type"] as? String }
        #expect(kinds == ["beacond.region.state"], "no exit, no second enter")
        let counts = try d.client.request("GET", "/v1/status").object["counts"] as? [String: Any]
        #expect(counts?["clock_ahead"] as? Int == 0, "the daemon's clock moved with the step")
        #expect(d.stop() == 0)
    }

    /// Between the step and the engine's next turn (up to a second) the last turn looked an
    /// hour old on the wall clock, and every request that needs the engine was refused with
    /// "the engine has not run for 3600 s". Its age is now measured on the time since boot.
    @Test func aStepForwardIsNotTakenForAStuckEngine() throws {
        let (d, offset) = try Self.startedInsideTheRegion()
        try "+3600\n".write(toFile: offset, atomically: true, encoding: .utf8)
        var refused: [String] = []
        var ages: [Double] = []
        let until = Date().addingTimeInterval(1.5)
        while Date() < until {
            let answer = try d.client.request("GET", "/v1/clients/app/regions")
            if answer.status != 200 { refused.append("\(answer.status) \(answer.body)") }
            let engine = try d.client.request("GET", "/v1/status").object["engine"] as? [String: Any]
            ages.append(engine?["last_turn_age_s"] as? Double ?? -1)
        }
        #expect(refused.isEmpty, "\(refused.prefix(2))")
        #expect(!ages.isEmpty && ages.allSatisfy { (0..<2).contains($0) }, "\(ages.max() ?? -1)")
        #expect(d.stop() == 0)
    }

    /// Webhook events waiting through a step forward longer than `max_age` keep their age:
    /// it is time they waited, and the step is not (a gateway booted days behind, its network
    /// and so NTP and the webhook back at once).
    @Test func aStepForwardLongerThanMaxAgeDeadLettersNothing() throws {
        let receiver = try WebhookReceiver(fail: 1000)
        let d = try APIDaemon(
            extra: Self.oneRegion + "webhooks:\n"
                + WebhookDeliveryTests.webhook("crm", receiver, extra: ", max_age: 1h"),
            monitoring: "enter_sightings: 1, exit_timeout: 30s")
        let offset = try Self.startWithAMovableClock(d)
        func webhook() throws -> [String: Any] {
            let status = try d.client.request("GET", "/v1/status").object
            return (status["webhooks"] as? [[String: Any]])?.first ?? [:]
        }
        /// Until `n` requests have failed, or an event was given up on.
        func waitForFailures(_ n: Int) throws {
            try eventually("\(n) failed requests", timeout: 20, every: 0.05, detail: { "\((try? webhook()) ?? [:])" }) {
                let hook = try webhook()
                return hook["failed_requests"] as? Int ?? 0 >= n || hook["dead_letters"] as? Int ?? 0 > 0
            }
        }
        try d.post([APIDaemon.sighting(major: 7)])
        try waitForFailures(1)
        // The clock is set two hours forward: the event has waited seconds, not two hours
        try "+7200\n".write(toFile: offset, atomically: true, encoding: .utf8)
        let before = try webhook()["failed_requests"] as? Int ?? 0
        try waitForFailures(before + 2)
        let hook = try webhook()
        #expect(hook["pending"] as? Int == 1 && hook["dead_letters"] as? Int == 0, "\(hook)")
        let logs = d.daemon?.logs ?? []
        #expect(logs.contains { $0.isLog("webhook.clock_step", ["webhook": "crm", "by_s": "7200"]) }, "\(logs)")
        #expect(d.stop() == 0)
    }

    /// A stop longer than exit_timeout (a power cut; here the clock moved a minute on while
    /// the daemon was down): the region, whose beacon never left, neither exits nor enters.
    @Test func aDowntimeLongerThanExitTimeoutExitsAndEntersNothing() throws {
        let d = try APIDaemon(extra: Self.oneRegion, monitoring: "enter_sightings: 1, exit_timeout: 10s")
        let offset = try Self.startWithAMovableClock(d)
        try d.post([APIDaemon.sighting(major: 7)])
        _ = try d.waitForHistory("the region's first state") { events in
            events.contains { $0["type"] as? String == "beacond.region.state" }
        }
        #expect(d.stop() == 0)
        try "+60\n".write(toFile: offset, atomically: true, encoding: .utf8)
        try Self.start(d, clockOffsetFile: offset)
        try d.post([APIDaemon.sighting(major: 7, clockAhead: 60)])
        _ = try d.waitForSightings(1)
        let kinds = try d.history().compactMap { $0["type"] as? String }
        #expect(kinds == ["beacond.region.state"], "no exit, no second enter")
        let regions = try d.client.request("GET", "/v1/clients/app/regions").object["regions"] as? [[String: Any]]
        #expect(regions?.first?["state"] as? String == "inside")
        #expect(d.stop() == 0)
    }

    /// A daemon on a movable clock whose one region its beacon has entered; and the clock's
    /// offset file.
    static func startedInsideTheRegion() throws -> (APIDaemon, String) {
        let d = try APIDaemon(
            extra: Self.oneRegion, monitoring: "enter_sightings: 1, exit_timeout: 30s")
        let offset = try Self.startWithAMovableClock(d)
        try d.post([APIDaemon.sighting(major: 7)])
        _ = try d.waitForHistory("the region's first state") { events in
            events.contains { $0["type"] as? String == "beacond.region.state" }
        }
        return (d, offset)
    }

    /// Starts the daemon with libfaketime's offset in a file (`+0`); returns the file's path.
    static func startWithAMovableClock(_ d: APIDaemon) throws -> String {
        guard FileManager.default.fileExists(atPath: libfaketime) else {
            throw TestFailure("libfaketime is missing: scripts/deps installs it")
        }
        let offset = d.dir.appendingPathComponent("clock-offset").path
        try "+0\n".write(toFile: offset, atomically: true, encoding: .utf8)
        try start(d, clockOffsetFile: offset)
        return offset
    }

    /// (Re)starts the daemon with its wall clock offset by what `file` says, now and later.
    static func start(_ d: APIDaemon, clockOffsetFile file: String) throws {
        try d.start(
            environment: [
                "LD_PRELOAD": libfaketime, "FAKETIME_TIMESTAMP_FILE": file, "FAKETIME_NO_CACHE": "1",
                "DONT_FAKE_MONOTONIC": "1",
            ], launcher: ["/usr/bin/env"])
    }
}
