import Foundation
import TestSupport
import Testing

/// The state directory's filesystem fills up (a real tmpfs, filled by a real file) and later
/// has room again: events made meanwhile are held in memory and then stored and delivered, in
/// order, with one log line when writes start failing and one when they work again.
/// Mounting needs root: skipped without it (CI runs the tests as root).
@Suite(.serialized) struct DiskFullTests {
    @Test(.enabled(if: getuid() == 0)) func eventsMadeWhileTheDiskIsFullAreStoredAndDeliveredOnceThereIsRoom() throws {
        let receiver = try WebhookReceiver()
        let d = try APIDaemon(
            extra: WebhookDeliveryTests.site(regions: 3) + "webhooks:\n"
                + WebhookDeliveryTests.webhook("crm", receiver), monitoring: WebhookDeliveryTests.monitoring)
        let state = d.dir.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        let mount = try runCommand(
            URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=8m", "tmpfs", state.path])
        try #require(mount.status == 0, "mounting a tmpfs needs root: \(mount.stderr)")
        defer { _ = try? runCommand(URL(fileURLWithPath: "/bin/umount"), ["-l", state.path]) }

        try d.start()
        try d.post([APIDaemon.sighting(major: 1)])
        try receiver.waitUntil("the first event") { _ in receiver.acceptedIDs.count == 1 }

        // Fill the filesystem to the last byte
        let filler = state.appendingPathComponent("filler").path
        let dd = try runCommand(URL(fileURLWithPath: "/bin/dd"), ["if=/dev/zero", "of=\(filler)", "bs=64k"])
        #expect(dd.stderr.contains("No space left"), "\(dd.stderr)")
        try d.post([APIDaemon.sighting(major: 2)])
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
        #expect(logs.contains { $0.contains("state.write_recovered stored=2 dropped=0") }, "\(logs)")
        #expect(logs.filter { $0.contains("state.write_failed") }.count <= 2, "once for events, once for states")
    }
}
