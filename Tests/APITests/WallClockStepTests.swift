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

    @Test func settingTheClockAnHourForwardExitsNoRegion() throws {
        guard FileManager.default.fileExists(atPath: Self.libfaketime) else {
            throw TestFailure("libfaketime is missing: scripts/deps installs it")
        }
        let d = try APIDaemon(
            extra: """
                clients:
                  - id: app
                    regions:
                      - {id: store, uuid: \(APIDaemon.uuid)}

                """, monitoring: "enter_sightings: 1, exit_timeout: 30s")
        let offset = d.dir.appendingPathComponent("clock-offset").path
        try "+0\n".write(toFile: offset, atomically: true, encoding: .utf8)
        try d.start(
            environment: [
                "LD_PRELOAD": Self.libfaketime, "FAKETIME_TIMESTAMP_FILE": offset, "FAKETIME_NO_CACHE": "1",
                "DONT_FAKE_MONOTONIC": "1",
            ], launcher: "/usr/bin/env")
        try d.post([APIDaemon.sighting(major: 7)])
        _ = try d.waitForHistory("the region's first state") { events in
            events.contains { $0["type"] as? String == "beacond.region.state" }
        }
        // The clock is set an hour forward; the engine turns at least once a second
        try "+3600\n".write(toFile: offset, atomically: true, encoding: .utf8)
        let deadline = Date().addingTimeInterval(10)
        var warnings: [String] = []
        while Date() < deadline {
            warnings = try d.client.request("GET", "/v1/status").object["last_errors"] as? [String] ?? []
            if warnings.contains(where: { $0.contains("clock.step") }) { break }
            usleep(20_000)
        }
        #expect(warnings.contains { $0.contains("clock.step by_s=3600") }, "\(warnings)")
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
}
