import Foundation
import TestSupport
import Testing

/// The state directory's filesystem fills up (a real tmpfs, filled by a real file) and later
/// has room again: events made meanwhile are held in memory and then stored and delivered, in
/// order, with one log line when writes start failing and one when they work again.
/// Mounting needs root: skipped without it (CI runs the tests as root).
@Suite(.serialized) struct DiskFullTests {
    /// The daemon's state directory on a fresh 8 MB tmpfs.
    static func mountTmpfs(_ d: APIDaemon) throws -> URL {
        let state = d.dir.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        let mount = try runCommand(
            URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=8m", "tmpfs", state.path])
        try #require(mount.status == 0, "mounting a tmpfs needs root: \(mount.stderr)")
        return state
    }

    /// A daemon (not started) with `regions` regions and a webhook `crm` to `receiver` (with
    /// `extra` settings), its state directory on a fresh tmpfs.
    static func daemon(regions: Int, webhook receiver: WebhookReceiver, extra: String = "") throws -> (APIDaemon, URL) {
        let d = try WebhookDeliveryTests.daemon(regions: regions, webhook: receiver, extra: extra)
        return (d, try mountTmpfs(d))
    }

    /// Starts `d`, waits until the first region's event reached `receiver`, fills the disk
    /// and has the second region entered, and waits until its event is held; returns the file
    /// to delete to make room.
    static func fillAfterTheFirstEvent(_ d: APIDaemon, to receiver: WebhookReceiver, state: URL) throws -> String {
        try d.start()
        try d.post([APIDaemon.sighting(major: 1)])
        try receiver.waitUntil("the first event") { _ in receiver.acceptedIDs.count == 1 }
        let filler = try fill(state)
        try d.post([APIDaemon.sighting(major: 2)])
        _ = try d.waitForStatus("one event held") { ($0["counts"] as? [String: Any])?["events_held"] as? Int == 1 }
        return filler
    }

    /// `fillAfterTheFirstEvent`, and waits until the region states too could not be saved:
    /// logged after they went to the runtime directory and the reserve.
    static func fillWithTheStatesUnsaved(_ d: APIDaemon, to receiver: WebhookReceiver, state: URL) throws -> String {
        let filler = try fillAfterTheFirstEvent(d, to: receiver, state: state)
        try d.daemon!.waitUntil("the region states unsaved") { _, logs in
            logs.contains { $0.contains("state.write_failed") && $0.contains("region and zone states") }
        }
        return filler
    }

    static func unmount(_ state: URL) { _ = try? runCommand(URL(fileURLWithPath: "/bin/umount"), ["-l", state.path]) }

    /// Fills the filesystem to the last byte; returns the file to delete to make room.
    static func fill(_ state: URL) throws -> String {
        let (filler, failure) = try fillFilesystem(at: state)
        #expect(failure == nil, "\(failure ?? "")")
        return filler
    }

    @Test(.enabled(if: getuid() == 0)) func eventsMadeWhileTheDiskIsFullAreStoredAndDeliveredOnceThereIsRoom() throws {
        let receiver = try WebhookReceiver()
        let (d, state) = try Self.daemon(regions: 3, webhook: receiver)
        defer { Self.unmount(state) }
        let filler = try Self.fillAfterTheFirstEvent(d, to: receiver, state: state)
        try d.post([APIDaemon.sighting(major: 3)])
        _ = try d.waitForStatus("two events held") {
            ($0["counts"] as? [String: Any])?["events_held"] as? Int == 2
        }
        #expect(receiver.acceptedIDs.count == 1, "not delivered before it is stored")
        let statusCommand = try runCommand(Executables.built("beaconctl"), ["--socket", d.socketPath, "status"])
        #expect(statusCommand.stdout.contains("state     2 events held in memory: the state store cannot write"))
        let doctor = try runCommand(
            Executables.built("beaconctl"), ["--socket", d.socketPath, "doctor", "--config", d.configPath])
        #expect(
            doctor.stdout.contains("[FAIL] state store: it cannot write: 2 events held in memory, 0 given up on"),
            "\(doctor.stdout)")

        try FileManager.default.removeItem(atPath: filler)
        try receiver.waitUntil("the held events, once there is room") { _ in receiver.acceptedIDs.count == 3 }
        let history = try d.history(type: "region.*")
        #expect(history.count == 3)
        #expect(receiver.acceptedIDs == history.compactMap { $0["id"] as? String }, "each once, in order")
        #expect(history.compactMap { ($0["data"] as? [String: Any])?["region"] as? String } == ["r1", "r2", "r3"])
        let status = try d.client.request("GET", "/v1/status").object
        #expect((status["counts"] as? [String: Any])?["events_held"] as? Int == 0)
        #expect((status["counts"] as? [String: Any])?["events_dropped"] as? Int == 0)
        #expect(d.stop() == 0)
        let logs = d.daemon!.logs
        #expect(logs.filter { $0.contains("state.write_failed") && $0.contains("events are held") }.count == 1)
        #expect(logs.contains { $0.isLog("state.write_recovered", ["stored": "2", "dropped": "0"]) }, "\(logs)")
        #expect(logs.filter { $0.contains("state.write_failed") }.count <= 2, "once for events, once for states")
    }

    /// A stop while the disk is full (an operator's first answer is often a restart): the held
    /// events, and the region states the store could not save either, go to the runtime
    /// directory. The next start, on a disk still full, holds them before its own events,
    /// and once there is room stores and delivers them all in order; it knows the region
    /// entered meanwhile, so the same beacon is no news. Before, the stop lost them
    /// (`state.events_lost`) and the next start reported that region again.
    @Test(.enabled(if: getuid() == 0)) func aStopWhileTheDiskIsFullKeepsWhatItHeldForTheNextStart() throws {
        let receiver = try WebhookReceiver()
        let (d, state) = try Self.daemon(regions: 3, webhook: receiver)
        defer { Self.unmount(state) }
        let filler = try Self.fillAfterTheFirstEvent(d, to: receiver, state: state)
        #expect(d.stop() == 0)
        let firstRun = d.daemon!.logs
        #expect(firstRun.contains { $0.isLog("state.events_kept", level: "warning", ["held": "1"]) }, "\(firstRun)")
        let kept = d.dir.appendingPathComponent("unsaved/beacond.sqlite").path
        #expect(FileManager.default.fileExists(atPath: kept))

        try d.start()
        try d.post([APIDaemon.sighting(major: 1), APIDaemon.sighting(major: 2), APIDaemon.sighting(major: 3)])
        _ = try d.waitForStatus("the kept event and the new one held") {
            ($0["counts"] as? [String: Any])?["events_held"] as? Int == 2
        }
        #expect(receiver.acceptedIDs.count == 1)
        try FileManager.default.removeItem(atPath: filler)
        try receiver.waitUntil("the kept event and the new one") { _ in receiver.acceptedIDs.count == 3 }
        try d.post([APIDaemon.sighting(major: 2, rssi: -50)])
        let history = try d.history(type: "region.*")
        #expect(history.compactMap { ($0["data"] as? [String: Any])?["region"] as? String } == ["r1", "r2", "r3"])
        #expect(receiver.acceptedIDs == history.compactMap { $0["id"] as? String }, "each once, in order")
        #expect(!FileManager.default.fileExists(atPath: kept), "removed once stored")
        #expect(d.stop() == 0)
        #expect(!(firstRun + d.daemon!.logs).contains { $0.contains("state.events_lost") })
    }

    /// A crash while the disk is full (`kill -9`, a watchdog's abort, the OOM killer) has no
    /// stop to keep anything, so what the state store cannot write is copied to the runtime
    /// directory as it is held. The next start delivers the held event without any new
    /// sighting, and knows the region entered meanwhile, so the same beacon is no news. Before,
    /// the event was lost and the next start reported the region again.
    /// After a crash with the second region's event held (`fillAfterTheFirstEvent`): frees
    /// the disk and starts again; the held event is delivered with no new sighting, and
    /// hearing its beacon again is no news (the states were kept too): r1, r2, r3, each once.
    static func restartWithRoomAndExpectTheHeldEventOnce(
        _ d: APIDaemon, receiver: WebhookReceiver, filler: String
    ) throws {
        try FileManager.default.removeItem(atPath: filler)
        try d.start()
        try receiver.waitUntil("the event held at the crash, with no new sighting") { _ in
            receiver.acceptedIDs.count == 2
        }
        try d.post([APIDaemon.sighting(major: 2, rssi: -50), APIDaemon.sighting(major: 3)])
        _ = try d.waitForHistory("r3 entered") { events in
            events.contains { ($0["data"] as? [String: Any])?["region"] as? String == "r3" }
        }
        let history = try d.history(type: "region.*")
        #expect(history.compactMap { ($0["data"] as? [String: Any])?["region"] as? String } == ["r1", "r2", "r3"])
        try receiver.waitUntil("r3") { _ in receiver.acceptedIDs.count == 3 }
        #expect(receiver.acceptedIDs == history.compactMap { $0["id"] as? String }, "each once, in order")
    }

    @Test(.enabled(if: getuid() == 0)) func aCrashWhileTheDiskIsFullLosesNothingItHeld() throws {
        let receiver = try WebhookReceiver()
        let (d, state) = try Self.daemon(regions: 3, webhook: receiver)
        defer { Self.unmount(state) }
        let filler = try Self.fillWithTheStatesUnsaved(d, to: receiver, state: state)
        d.crash()
        let kept = d.dir.appendingPathComponent("unsaved/beacond.sqlite").path
        #expect(FileManager.default.fileExists(atPath: kept))

        try Self.restartWithRoomAndExpectTheHeldEventOnce(d, receiver: receiver, filler: filler)
        #expect(!FileManager.default.fileExists(atPath: kept), "removed once stored")
        #expect(
            d.daemon!.logs.contains { $0.isLog("state.unsaved_found", level: "info", ["events": "1", "regions": "3"]) })
        #expect(d.stop() == 0)
    }

    /// A power cut while the disk is full: the daemon dies and the reboot empties the runtime
    /// directory (`/run` is memory), so its copy of the held alert and states is gone. The
    /// state directory's reserve, room taken on the same disk while it had room, still has
    /// them: the next start delivers the alert without any new sighting and knows the region
    /// entered meanwhile, so the same beacon is no news. Before, the alert was lost for good.
    @Test(.enabled(if: getuid() == 0)) func aRebootWhileTheDiskIsFullLosesNoAlert() throws {
        let receiver = try WebhookReceiver()
        let (d, state) = try Self.daemon(regions: 3, webhook: receiver)
        defer { Self.unmount(state) }
        let filler = try Self.fillWithTheStatesUnsaved(d, to: receiver, state: state)
        let reserve = try d.client.request("GET", "/v1/status").object["state_reserve"] as? [String: Any]
        #expect(reserve?["alerts_kept"] as? Int == 1)
        #expect(reserve?["bytes"] as? Int == 4 << 20)
        d.crash()
        try FileManager.default.removeItem(at: d.dir.appendingPathComponent("unsaved"))

        try Self.restartWithRoomAndExpectTheHeldEventOnce(d, receiver: receiver, filler: filler)
        #expect(
            d.daemon!.logs.contains {
                $0.isLog("state.reserve_found", level: "info", ["events": "1", "not_in_runtime_copy": "1"])
            })
        let emptied = try d.client.request("GET", "/v1/status").object["state_reserve"] as? [String: Any]
        #expect(emptied?["alerts_kept"] as? Int == 0, "emptied once stored")
        #expect(d.stop() == 0)
    }

    /// A pallet leaves its zone while the disk is full, and the daemon is killed before there
    /// is room: the state file still has it in the zone, the runtime directory's copy has it in
    /// none. The copy is the newer: the next start must not send the exit again (found by
    /// bench/chaos.py). Nor must an asset the copy puts in a zone keep the file's older zones.
    @Test(.enabled(if: getuid() == 0)) func anAssetThatLeftItsZoneWhileTheDiskWasFullLeavesItOnce() throws {
        let d = try APIDaemon(extra: AssetAPITests.site)
        let state = try Self.mountTmpfs(d)
        defer { Self.unmount(state) }
        try d.start()
        func exits(_ events: [[String: Any]]) -> Int {
            events.filter { $0["type"] as? String == "beacond.zone.exit" }.count
        }
        _ = try AssetAPITests.hear(d, until: "the zone.enter") {
            $0.contains { $0["type"] as? String == "beacond.zone.enter" }
        }
        let filler = try Self.fill(state)
        let deadline = Date().addingTimeInterval(15)
        while (try d.client.request("GET", "/v1/assets/pallet-9").object["zones"] as? [String]) != [] {
            try #require(Date() < deadline, "the pallet never left the dock")
            try d.post(AssetAPITests.sightings(at: (8, 5)))
            usleep(200_000)
        }
        try d.daemon!.waitUntil("the zone states unsaved") { _, logs in
            logs.contains { $0.contains("state.write_failed") && $0.contains("region and zone states") }
        }
        d.crash()

        try FileManager.default.removeItem(atPath: filler)
        try d.start()
        _ = try d.waitForHistory("the held exit, stored") { exits($0) >= 1 }
        // Heard outside the dock for three more position ticks: a second exit would be in the first.
        let positions = try d.history(type: "asset.position").count
        let after = try AssetAPITests.hear(d, at: (8, 5), until: "three positions after the start") { events in
            events.filter { $0["type"] as? String == "beacond.asset.position" }.count >= positions + 3
        }
        #expect(exits(after) == 1, "\(after.compactMap { $0["type"] as? String })")
        // The copy keeps the pallet, in no zone (its tag's last place and last-seen, SPEC §7.2).
        #expect(d.daemon!.logs.contains { $0.contains("state.unsaved_found") && $0.contains("assets=1") })
        #expect(d.stop() == 0)
    }

    /// A runtime directory that cannot take the copy (here a file is in its way) is told once,
    /// and a stop says the held event is lost rather than kept.
    @Test(.enabled(if: getuid() == 0)) func aRuntimeDirectoryThatCannotTakeTheCopyIsTold() throws {
        let receiver = try WebhookReceiver()
        let (d, state) = try Self.daemon(regions: 3, webhook: receiver)
        defer { Self.unmount(state) }
        let blocked = d.dir.appendingPathComponent("unsaved").path
        #expect(FileManager.default.createFile(atPath: blocked, contents: Data()))
        _ = try Self.fillAfterTheFirstEvent(d, to: receiver, state: state)
        try d.post([APIDaemon.sighting(major: 3)])
        _ = try d.waitForStatus("two events held") { ($0["counts"] as? [String: Any])?["events_held"] as? Int == 2 }
        #expect(d.stop() == 0)
        let logs = d.daemon!.logs
        #expect(logs.filter { $0.isLog("state.unsaved_not_kept", level: "error") }.count == 1, "\(logs)")
        #expect(logs.contains { $0.isLog("state.events_lost", level: "error", ["held": "2"]) }, "\(logs)")
        #expect(!logs.contains { $0.contains("state.events_kept") })
    }

    /// A state file that cannot be opened at start — here `gateway.state_dir` is a file, as a
    /// mount that has not come up or a read-only filesystem would leave it — no longer means a
    /// run without a store: events are held as on a full disk, and once the directory can be
    /// made the next write opens the file, stores them and the webhook gets them, with no
    /// restart. Before, the daemon ran without history or webhooks until it was restarted.
    @Test func aStateDirectoryThatCannotBeOpenedAtStartIsOpenedOnceItCanBe() throws {
        let receiver = try WebhookReceiver()
        let d = try WebhookDeliveryTests.daemon(regions: 2, webhook: receiver)
        let state = d.dir.appendingPathComponent("state").path
        #expect(FileManager.default.createFile(atPath: state, contents: Data("not a directory".utf8)))
        try d.start()
        try d.post([APIDaemon.sighting(major: 1)])
        let status = try d.waitForStatus("the event held") {
            ($0["counts"] as? [String: Any])?["events_held"] as? Int == 1
        }
        #expect((status["state_store_error"] as? String)?.contains("unable to open") == true, "\(status)")
        let doctor = try runCommand(
            Executables.built("beaconctl"), ["--socket", d.socketPath, "doctor", "--config", d.configPath])
        #expect(
            doctor.stdout.contains("[FAIL] state store: \(state)/beacond.sqlite cannot be opened"), "\(doctor.stdout)")
        let statusCommand = try runCommand(Executables.built("beaconctl"), ["--socket", d.socketPath, "status"])
        #expect(
            statusCommand.stdout.contains("state     1 events held in memory: the state store cannot be opened: "),
            "\(statusCommand.stdout)")
        #expect(receiver.requests.isEmpty)

        try FileManager.default.removeItem(atPath: state)
        try receiver.waitUntil("the held event, once the file opens") { _ in receiver.acceptedIDs.count == 1 }
        try d.post([APIDaemon.sighting(major: 2)])
        try receiver.waitUntil("the next one") { _ in receiver.acceptedIDs.count == 2 }
        let history = try d.history(type: "region.*")
        #expect(history.compactMap { ($0["data"] as? [String: Any])?["region"] as? String } == ["r1", "r2"])
        #expect(receiver.acceptedIDs == history.compactMap { $0["id"] as? String })
        let after = try d.client.request("GET", "/v1/status").object
        #expect(after["state_store_error"] is NSNull)
        try d.daemon!.waitUntil("the whole file read once it opened") { _, logs in
            logs.contains { $0.isLog("state.verified", level: "info", ["result": "whole"]) }
        }
        #expect(d.stop() == 0)
        let logs = d.daemon!.logs
        #expect(logs.contains { $0.isLog("state.unavailable", level: "error") }, "\(logs)")
        #expect(
            logs.contains { $0.isLog("state.available", level: "info") && $0.contains("failed_before=") }, "\(logs)")
        #expect(!logs.contains { $0.contains("state.verify_failed") }, "read once it opened, not failed at start")
        // Stopped with nothing held: the next start restores from the file it opened late.
        try d.start()
        try d.post([APIDaemon.sighting(major: 1), APIDaemon.sighting(major: 2)])
        _ = try d.waitForSightings(2)
        #expect(try d.history(type: "region.*").count == 2, "no second enter")
        #expect(d.stop() == 0)
    }

    /// A region added through the API lives in the state file. A start that cannot open it
    /// (here the directory is away and a file is in its way, as before a late mount) does not
    /// monitor that region; once the file opens, it does, without a restart. Before, the region
    /// went unmonitored until the next restart.
    @Test func regionsAddedThroughTheAPIApplyWhenTheStateFileOpensLate() throws {
        let receiver = try WebhookReceiver()
        let d = try WebhookDeliveryTests.daemon(regions: 1, webhook: receiver)
        try d.start()
        let put = try d.client.request(
            "PUT", "/v1/clients/app/regions/api9", body: "{\"uuid\": \"\(APIDaemon.uuid)\", \"major\": 9}")
        #expect(put.status == 200)
        #expect(d.stop() == 0)
        let state = d.dir.appendingPathComponent("state")
        let away = d.dir.appendingPathComponent("state.away")
        try FileManager.default.moveItem(at: state, to: away)
        #expect(FileManager.default.createFile(atPath: state.path, contents: Data()))

        try d.start()
        let regions = { () throws -> [String] in
            let list = try d.client.request("GET", "/v1/clients/app/regions").object["regions"] as? [[String: Any]]
            return (list ?? []).compactMap { $0["id"] as? String }
        }
        #expect(try regions() == ["r1"], "the API's region is in the file that cannot be opened")
        try FileManager.default.removeItem(at: state)
        try FileManager.default.moveItem(at: away, to: state)
        try d.post([APIDaemon.sighting(major: 1)])  // a write, which opens the file
        _ = try d.daemon!.waitUntil("the API's changes applied") { _, logs in
            logs.contains { $0.isLog("state.api_changes_applied", level: "info", ["changes": "1"]) }
        }
        #expect(try regions() == ["r1", "api9"])
        try d.post([APIDaemon.sighting(major: 9)])
        _ = try d.waitForHistory("api9 determined") { events in
            events.contains { $0["subject"] as? String == "app/api9" }
        }
        #expect(d.stop() == 0)
    }

    /// The worst start: a corrupt state file on a full disk. The file is set aside, and the new
    /// one cannot be made until there is room; until then events are held, and then the file
    /// is made, and they are stored and delivered, without a restart.
    @Test(.enabled(if: getuid() == 0)) func aCorruptFileOnAFullDiskIsReplacedOnceThereIsRoom() throws {
        let receiver = try WebhookReceiver()
        let (d, state) = try Self.daemon(regions: 2, webhook: receiver)
        defer { Self.unmount(state) }
        let file = state.appendingPathComponent("beacond.sqlite")
        try Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }).write(to: file)
        let filler = try Self.fill(state)
        try d.start()
        try d.post([APIDaemon.sighting(major: 1)])
        _ = try d.waitForStatus("the event held") { ($0["counts"] as? [String: Any])?["events_held"] as? Int == 1 }
        #expect(receiver.requests.isEmpty)

        try FileManager.default.removeItem(atPath: filler)
        try receiver.waitUntil("the held event, once the new file is made") { _ in receiver.acceptedIDs.count == 1 }
        let aside = try FileManager.default.contentsOfDirectory(atPath: state.path).filter {
            $0.hasPrefix("beacond.sqlite.corrupt-")
        }
        #expect(aside.count == 1, "\(aside)")
        #expect(d.stop() == 0)
        let logs = d.daemon!.logs
        #expect(logs.contains { $0.isLog("state.unavailable", level: "error") }, "\(logs)")
        #expect(logs.contains { $0.isLog("state.corrupt", level: "error", having: ["moved_to"]) }, "\(logs)")
    }
}
