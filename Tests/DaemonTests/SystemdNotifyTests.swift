import Foundation
import TestSupport
import Testing

/// `Type=notify` against a real `NOTIFY_SOCKET`: readiness after the API listens, watchdog
/// pings at half of `WATCHDOG_USEC` from the engine's loop, status lines, stop notice.
@Suite(.serialized) struct SystemdNotifyTests {
    static let site = "clients: [{id: app, regions: [{id: store, uuid: \(APIDaemon.uuid)}]}]\n"

    @Test func readyAfterTheSocketListensThenWatchdogPingsThenStopping() throws {
        let d = try APIDaemon(extra: Self.site)
        let notify = try NotifySocket(path: d.dir.appendingPathComponent("notify.sock").path)
        try d.start(environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000"], waitForSocket: false)
        let untilReady = try notify.until("READY=1") { $0.contains("READY=1") }
        // The API answers by the time READY arrives
        #expect(try d.client.request("GET", "/v1/status").status == 200)
        let ready = untilReady.last!.text
        #expect(ready.contains("STATUS=no adapter scanning, 0 beacons, outbox 0"), "\(ready)")
        // WATCHDOG_USEC = 1 s: a ping every 0.5 s
        let pings = notify.collect(for: 3).filter { $0.text == "WATCHDOG=1" }
        #expect(pings.count >= 4 && pings.count <= 8, "\(pings.count) pings in 3 s")
        d.daemon!.process.terminate()
        let stop = try notify.until("STOPPING=1") { $0.contains("STOPPING=1") }
        #expect(stop.last!.text.contains("STATUS=stopping"))
        d.daemon!.process.waitUntilExit()
        #expect(d.daemon!.process.terminationStatus == 0)
    }

    @Test func aWedgedEngineStopsThePings() throws {
        let d = try APIDaemon(extra: Self.site)
        let notify = try NotifySocket(path: d.dir.appendingPathComponent("notify.sock").path)
        try d.start(
            environment: [
                "NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "400000", "BEACOND_FAULT_WEDGE_ENGINE_AFTER": "1.5",
            ], waitForSocket: false)
        _ = try notify.until("READY=1") { $0.contains("READY=1") }
        let first = notify.collect(for: 1.0).filter { $0.text == "WATCHDOG=1" }
        #expect(first.count >= 3, "pinging while the engine turns: \(first.count)")
        _ = notify.collect(for: 1.5)  // the wedge begins at 1.5 s
        let after = notify.collect(for: 2.0).filter { $0.text == "WATCHDOG=1" }
        #expect(after.isEmpty, "no ping from a wedged engine")
        // The process itself is alive (the API still answers, from what the engine last said)
        #expect(try d.client.request("GET", "/metrics").status == 200)
        d.crash()
    }
}

/// SIGHUP: a good file is applied in place, a bad one refused with its located message.
@Suite(.serialized) struct ReloadTests {
    static func regions(_ majors: [Int]) -> String {
        "clients:\n  - id: app\n    regions:\n"
            + majors.map { "      - {id: r\($0), uuid: \(APIDaemon.uuid), major: \($0)}\n" }.joined()
    }

    @Test func aGoodChangeIsAppliedLiveWithoutASecondEnterForUnchangedRegions() throws {
        let d = try APIDaemon(extra: Self.regions([1, 2]), monitoring: "enter_sightings: 1, exit_timeout: 5m")
        let notify = try NotifySocket(path: d.dir.appendingPathComponent("notify.sock").path)
        try d.start(environment: ["NOTIFY_SOCKET": notify.path])
        _ = try notify.until("READY=1") { $0.contains("READY=1") }
        try d.post([APIDaemon.sighting(major: 1)])
        _ = try d.waitForHistory("r1 inside") { $0.contains { $0["subject"] as? String == "app/r1" } }
        let before = try d.history().count

        try d.rewrite(extra: Self.regions([1, 3]))
        kill(d.daemon!.process.processIdentifier, SIGHUP)
        let messages = try notify.until("READY=1 after the reload") { $0.contains("READY=1") }
        #expect(messages.contains { $0.text.contains("RELOADING=1") && $0.text.contains("MONOTONIC_USEC=") })
        #expect(messages.last!.text.contains("STATUS=configuration reloaded"))
        let regions = try d.client.request("GET", "/v1/clients/app/regions").object["regions"] as? [[String: Any]]
        #expect(regions?.map { $0["id"] as? String } == ["r1", "r3"])
        #expect(regions?.first?["state"] as? String == "inside", "r1 kept its state")
        // The beacon is still there: no second enter, no new state for r1
        try d.post([APIDaemon.sighting(major: 1)])
        try d.post([APIDaemon.sighting(major: 1)])
        let after = try d.history()
        #expect(!after.dropFirst(before).contains { $0["subject"] as? String == "app/r1" })
        // The log reaches this process through a pipe read on another queue: wait for it
        try d.daemon!.waitUntil("the reload's log line") { _, logs in
            logs.contains { $0.isLog("config.reloaded", ["regions_added": "1"]) && $0.contains("regions_removed=1") }
        }
        #expect(d.stop() == 0)
    }

    /// The site reloaded live: a pallet parked in the dock, its enter and dwell sent, then an
    /// alarm added (listed first, so every alarm moves in the list). Neither is sent again.
    @Test func addingAnAlarmSendsNoParkedPalletsAlertsAgain() throws {
        let site = AssetAPITests.site.replacingOccurrences(
            of: "on: [enter, exit], confirm: 0s}", with: "on: [enter, dwell], dwell: 1s, confirm: 0s}")
        let d = try APIDaemon(extra: site, monitoring: "enter_sightings: 1, exit_timeout: 5m")
        let notify = try NotifySocket(path: d.dir.appendingPathComponent("notify.sock").path)
        try d.start(environment: ["NOTIFY_SOCKET": notify.path])
        _ = try notify.until("READY=1") { $0.contains("READY=1") }
        func count(_ type: String, in events: [[String: Any]]) -> Int {
            events.filter { $0["type"] as? String == "beacond.\(type)" }.count
        }
        let before = try AssetAPITests.hear(d, until: "enter and dwell") { count("zone.dwell", in: $0) == 1 }
        #expect(count("zone.enter", in: before) == 1)

        try d.rewrite(
            extra: site.replacingOccurrences(
                of: "alarms:\n", with: "alarms:\n  - {id: dock-count, zones: [dock], on: [exit]}\n"))
        kill(d.daemon!.process.processIdentifier, SIGHUP)
        _ = try notify.until("READY=1 after the reload") { $0.contains("READY=1") }
        // Three position ticks after the reload: a doubled alert would have come in the first
        let positions = count("asset.position", in: try d.history())
        let after = try AssetAPITests.hear(d, until: "three positions after the reload") {
            count("asset.position", in: $0) >= positions + 3
        }
        #expect(count("zone.enter", in: after) == 1 && count("zone.dwell", in: after) == 1)
        #expect(
            d.daemon!.logs.contains { $0.contains("config.reloaded") && $0.contains("site=replaced") },
            "\(d.daemon!.logs)")
        #expect(
            (try d.client.request("GET", "/v1/assets/pallet-9").object["zones"] as? [String]) == ["dock"])
        #expect(d.stop() == 0)
    }

    @Test func aBadFileIsRefusedWithItsMessageAndTheOldConfigurationRuns() throws {
        let d = try APIDaemon(extra: Self.regions([1, 2]))
        let notify = try NotifySocket(path: d.dir.appendingPathComponent("notify.sock").path)
        try d.start(environment: ["NOTIFY_SOCKET": notify.path])
        _ = try notify.until("READY=1") { $0.contains("READY=1") }
        try d.rewrite(extra: Self.regions([1, 2]) + "positioning:\n  publish_interval: soon\n")
        kill(d.daemon!.process.processIdentifier, SIGHUP)
        let messages = try notify.until("READY=1 after the refusal") { $0.contains("READY=1") }
        #expect(messages.last!.text.contains("reload refused"))
        try d.daemon!.waitUntil("the refusal logged") { _, logs in
            logs.contains { $0.contains("config.reload_refused") }
        }
        let refusal = d.daemon!.logs.first { $0.contains("config.reload_refused") } ?? ""
        #expect(
            (try? LogfmtReader.fields(refusal))?["error"]?.hasSuffix(
                "beacond.yaml:10:21: positioning.publish_interval: expected a duration like \"30s\", got \"soon\"")
                == true,
            "\(refusal)")
        let regions = try d.client.request("GET", "/v1/clients/app/regions").object["regions"] as? [[String: Any]]
        #expect(regions?.map { $0["id"] as? String } == ["r1", "r2"])
        #expect(d.stop() == 0)
    }

    @Test func aShorterExitTimeoutAppliesToRegionsAlreadyInside() throws {
        let d = try APIDaemon(extra: Self.regions([1]), monitoring: "enter_sightings: 1, exit_timeout: 5m")
        try d.start()
        try d.post([APIDaemon.sighting(major: 1)])
        _ = try d.waitForHistory("r1 inside") { $0.contains { $0["subject"] as? String == "app/r1" } }
        let config = try String(contentsOfFile: d.configPath, encoding: .utf8)
            .replacingOccurrences(of: "exit_timeout: 5m", with: "exit_timeout: 2s")
        try config.write(toFile: d.configPath, atomically: true, encoding: .utf8)
        kill(d.daemon!.process.processIdentifier, SIGHUP)
        // The beacon is silent: with the new 2 s timeout, r1 exits without a restart
        _ = try d.waitForHistory("the exit under the new timeout", timeout: 10) { events in
            events.contains { $0["type"] as? String == "beacond.region.exit" && $0["subject"] as? String == "app/r1" }
        }
        #expect(!d.daemon!.logs.contains { $0.contains("config.needs_restart") })
        #expect(d.stop() == 0)
    }
}
