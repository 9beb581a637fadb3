import Foundation
import TestSupport
import Testing

/// `kill -9` in the middle of webhook delivery: after a restart the receiver ends up with
/// every event at least once, in order, duplicates identical; regions keep their state.
@Suite(.serialized) struct CrashRecoveryTests {
    /// A daemon (not started) with `regions` regions that enter on one sighting, and a
    /// webhook for their events.
    static func daemonWithWebhook(regions: Int) throws -> (WebhookReceiver, APIDaemon) {
        let receiver = try WebhookReceiver()
        return (receiver, try WebhookDeliveryTests.daemon(regions: regions, webhook: receiver))
    }

    /// The root page of `table` in the stopped daemon's state file overwritten with garbage, as
    /// a card losing one page does: its other pages read, that table does not.
    static func overwriteRootPage(of table: String, in d: APIDaemon) throws {
        let file = d.dir.appendingPathComponent("state/beacond.sqlite").path
        let damage = """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1])
            page = c.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (sys.argv[2],)).fetchone()[0]
            size = c.execute("PRAGMA page_size").fetchone()[0]
            c.close()
            with open(sys.argv[1], "r+b") as f:
                f.seek((page - 1) * size)
                f.write(bytes((i * 7919) % 251 for i in range(size)))
            """
        let result = try runCommand(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", damage, file, table])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// The state file overwritten with garbage (a failing SD card): the daemon sets it aside,
    /// says so, and starts a new store, so its webhooks still deliver and states are kept.
    /// Before, it ran on with no store: webhooks off until someone noticed.
    @Test func aCorruptStateFileIsSetAsideAndWebhooksStillDeliver() throws {
        let (receiver, d) = try Self.daemonWithWebhook(regions: 1)
        let state = d.dir.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        try Data(repeating: 0xA5, count: 16_384).write(to: state.appendingPathComponent("beacond.sqlite"))
        try d.start()
        try d.post([APIDaemon.sighting(major: 1)])
        try receiver.waitUntil("the event delivered") { _ in receiver.acceptedIDs.count == 1 }
        #expect(try d.history().count == 1)
        let kept = try FileManager.default.contentsOfDirectory(atPath: state.path)
        #expect(kept.contains { $0.hasPrefix("beacond.sqlite.corrupt-") }, "\(kept)")
        let doctor = try runCommand(
            Executables.built("beaconctl"), ["--socket", d.socketPath, "doctor", "--config", d.configPath])
        #expect(
            doctor.stdout.contains("[WARN] state store: a corrupt state file was set aside as "), "\(doctor.stdout)")
        #expect(d.stop() == 0)
        #expect(d.daemon!.logs.contains { $0.isLog("state.corrupt", level: "error", having: ["moved_to"]) })
    }
    /// The state file damaged while the daemon runs (an SD card losing a page under it):
    /// before, every event after it was held in memory and none delivered until someone
    /// restarted the service. Now the write that finds the damage empties the file in place
    /// and goes on: the webhook gets the next events, and a restart still knows the regions.
    @Test func aStateFileDamagedWhileRunningIsEmptiedAndDeliveryGoesOn() throws {
        let (receiver, d) = try Self.daemonWithWebhook(regions: 2)
        try d.start()
        try d.post([APIDaemon.sighting(major: 1)])
        let before = try d.waitForHistory("the first region's events") { !$0.isEmpty }.count
        try receiver.waitUntil("the first events delivered") { _ in receiver.acceptedIDs.count == before }
        // From another process, as the damage comes: the history's table pointed at an
        // index's page, so the daemon's next write of an event finds the file malformed.
        let file = d.dir.appendingPathComponent("state/beacond.sqlite").path
        let damage = """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1], isolation_level=None)
            v = c.execute("PRAGMA schema_version").fetchone()[0]
            c.execute("PRAGMA writable_schema = ON")
            c.execute("UPDATE sqlite_master SET rootpage = (SELECT rootpage FROM sqlite_master WHERE name = 'outbox_by_age') WHERE name = 'event'")
            c.execute("PRAGMA schema_version = %d" % (v + 1))
            """
        let result = try runCommand(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", damage, file])
        #expect(result.status == 0, "\(result.stderr)")

        try d.post([APIDaemon.sighting(major: 2)])
        try receiver.waitUntil("the second region's events delivered", timeout: 20) { _ in
            receiver.acceptedIDs.count > before
        }
        #expect(
            d.daemon!.logs.contains {
                $0.isLog("state.corrupt_while_running", level: "error") && $0.contains("copied_to=")
            })
        let kept = try FileManager.default.contentsOfDirectory(atPath: d.dir.appendingPathComponent("state").path)
        #expect(kept.contains { $0.hasPrefix("beacond.sqlite.corrupt-") }, "\(kept)")
        // Told where an operator looks: a storage card that corrupts files is failing.
        let status = try d.client.request("GET", "/v1/status").object
        #expect((status["counts"] as? [String: Any])?["state_emptied"] as? Int == 1)
        let metrics = try d.client.request("GET", "/metrics").body
        #expect(metrics.contains("\nbeacond_state_store_emptied_total 1\n"))
        let doctor = try runCommand(
            Executables.built("beaconctl"), ["--socket", d.socketPath, "doctor", "--config", d.configPath])
        #expect(doctor.stdout.contains("[WARN] state store: found corrupt 1 time(s)"), "\(doctor.stdout)")
        let statusCommand = try runCommand(Executables.built("beaconctl"), ["--socket", d.socketPath, "status"])
        #expect(statusCommand.stdout.contains("state     found corrupt 1 time(s) and emptied in place"))
        let afterDamage = try d.history(type: "region.*").compactMap { $0["id"] as? String }
        #expect(afterDamage.count == 1, "the second region's state, in the emptied file's history")
        #expect(d.stop() == 0)

        // Both regions' states were written to the emptied file: after a restart the same
        // beacons make no event (a region that had lost its state would report it again).
        try d.start()
        try d.post([APIDaemon.sighting(major: 1), APIDaemon.sighting(major: 2)])
        try d.post([APIDaemon.sighting(major: 1, rssi: -50)])
        #expect(try d.history(type: "region.*").compactMap { $0["id"] as? String } == afterDamage)
        #expect(d.stop() == 0)
    }

    /// Damage in a page that nothing reads at start (the history's) is found by the check of
    /// the whole file the daemon makes once it is ready, and mended while the region states
    /// can still be carried over; before, it waited for whatever met it first, or for a
    /// restart that set the whole file aside.
    @Test func damageNothingReadsIsFoundByTheCheckOfTheWholeFile() throws {
        let (_, d) = try Self.daemonWithWebhook(regions: 2)
        try d.start()
        try d.post([APIDaemon.sighting(major: 1), APIDaemon.sighting(major: 2)])
        _ = try d.waitForHistory("both regions' states") { $0.count == 2 }
        try d.daemon!.waitUntil("the check of a whole file") { _, logs in
            logs.contains { $0.isLog("state.verified", level: "info", ["result": "whole"]) }
        }
        #expect(d.stop() == 0)
        try Self.overwriteRootPage(of: "event", in: d)

        try d.start()
        try d.daemon!.waitUntil("the damage found by the check") { _, logs in
            logs.contains { $0.isLog("state.corrupt_while_running", level: "error") && $0.contains("quick_check") }
        }
        let status = try d.client.request("GET", "/v1/status").object
        #expect((status["counts"] as? [String: Any])?["state_emptied"] as? Int == 1)
        // The region states were carried over: the same beacons are no news.
        try d.post([APIDaemon.sighting(major: 1), APIDaemon.sighting(major: 2)])
        try d.post([APIDaemon.sighting(major: 1, rssi: -50)])
        #expect(try d.history(type: "region.*").isEmpty)
        #expect(d.stop() == 0)
    }

    @Test func aCrashMidDeliveryLosesNothingAndDoublesNoEnter() throws {
        let receiver = try WebhookReceiver(secret: "k", fail: 3)
        let dir = try Executables.temporaryDirectory()
        let secret = dir.appendingPathComponent("secret").path
        try "k".write(toFile: secret, atomically: true, encoding: .utf8)
        let d = try APIDaemon(
            extra: WebhookDeliveryTests.site(regions: 10) + "webhooks:\n"
                + WebhookDeliveryTests.webhook("crm", receiver, secretFile: secret),
            monitoring: "enter_sightings: 1, exit_timeout: 5m", dir: dir)
        try d.start()
        let sightings = (1...10).map { APIDaemon.sighting(major: $0) }
        try d.post(sightings)
        _ = try d.waitForHistory("ten region states") { $0.count == 10 }
        // Mid-delivery: the receiver has refused some requests and acknowledged none
        try receiver.waitUntil("two refused requests") { $0.count >= 2 }
        d.crash()
        #expect(receiver.acceptedIDs.isEmpty)

        try d.start()
        try d.post(sightings)  // the beacons are still there
        try d.post([APIDaemon.sighting(major: 1, rssi: -50)])
        let history = try d.history(type: "region.*")
        let expected = history.compactMap { $0["id"] as? String }
        #expect(expected.count == 10, "no event after the restart: no second enter, no new state")
        #expect(!history.contains { $0["type"] as? String == "beacond.region.enter" })
        try receiver.waitUntil("every event delivered after the restart", timeout: 20) { _ in
            var seen: [String] = []
            for id in receiver.acceptedIDs where !seen.contains(id) { seen.append(id) }
            return seen == expected
        }
        // At least once, in order; a resent event is the same event
        let accepted = receiver.requests.filter { $0["status"] as? Int == 200 }
        var firstSeen: [String] = []
        var bodies: [String: NSDictionary] = [:]
        for request in accepted {
            for event in request["events"] as? [[String: Any]] ?? [] {
                let id = event["id"] as! String
                if let earlier = bodies[id] { #expect(earlier == event as NSDictionary) }
                bodies[id] = event as NSDictionary
                if !firstSeen.contains(id) { firstSeen.append(id) }
            }
        }
        #expect(firstSeen == expected)
        #expect(receiver.requests.allSatisfy { $0["signature_ok"] as? Bool == true })
        let regions = try d.client.request("GET", "/v1/clients/app/regions").object["regions"] as? [[String: Any]]
        #expect(regions?.allSatisfy { $0["state"] as? String == "inside" } == true)
        #expect(d.stop() == 0)
    }

    /// An asset parked in a zone through a `kill -9`: its zone membership was saved with the
    /// enter, so the restarted daemon raises no second `zone.enter` for it.
    @Test func aCrashDoublesNoZoneEnter() throws {
        let d = try APIDaemon(extra: AssetAPITests.site)
        try d.start()
        let before = try AssetAPITests.hear(d, until: "the zone.enter") {
            $0.contains { $0["type"] as? String == "beacond.zone.enter" }
        }.count
        d.crash()
        try d.start()
        // The pallet is still at the dock: positions come again, and no enter with them
        let history = try AssetAPITests.hear(d, until: "three positions after the restart") { events in
            events.dropFirst(before).filter { $0["type"] as? String == "beacond.asset.position" }.count >= 3
        }
        #expect(history.filter { $0["type"] as? String == "beacond.zone.enter" }.count == 1)
        let asset = try d.client.request("GET", "/v1/assets/pallet-9").object
        #expect(asset["zones"] as? [String] == ["dock"])
        let logs = d.daemon?.logs ?? []
        #expect(logs.contains { $0.contains("assets_in_zones=1") }, "\(logs)")
        #expect(d.stop() == 0)
    }
}
