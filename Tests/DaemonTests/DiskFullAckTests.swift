import Foundation
import TestSupport
import Testing

/// A receiver acknowledges a batch just as the state directory's disk fills: the outbox cannot
/// delete what was delivered. A restart before there is room must not send it again (found by
/// CI: `DiskFullTests.aStopWhileTheDiskIsFullKeepsWhatItHeldForTheNextStart` met r1 twice
/// when the fill beat the delete). Mounting needs root: skipped without it.
@Suite(.serialized) struct DiskFullAckTests {
    @Test(.enabled(if: getuid() == 0)) func anAcknowledgementTheFullDiskRefusedIsNotSentAgainAfterARestart() throws {
        // The receiver answers a second late: the disk is filled between its reading the
        // batch and its 200.
        let receiver = try WebhookReceiver(delay: 1)
        let (d, state) = try DiskFullTests.daemon(regions: 3, webhook: receiver)
        defer { DiskFullTests.unmount(state) }
        try d.start()
        try d.post([APIDaemon.sighting(major: 1)])
        try receiver.waitUntil("r1 at the receiver") { $0.contains { $0["waiting"] as? Bool == true } }
        let filler = try DiskFullTests.fill(state)
        try d.daemon!.waitUntil("the acknowledgement unsaved") { _, logs in
            logs.contains { $0.isLog("webhook.ack_not_saved", level: "error", ["webhook": "crm"]) }
        }
        let acks = d.dir.appendingPathComponent("unsaved/acks").path
        let kept = try String(contentsOfFile: acks, encoding: .utf8)
        #expect(receiver.acceptedIDs.count == 1)
        #expect(kept.hasPrefix("crm\t") && kept.hasSuffix("\t\(receiver.acceptedIDs[0])\n"), "\(kept)")
        #expect(d.stop() == 0)

        // Still full at the next start: what was acknowledged is not sent again.
        try d.start()
        try d.daemon!.waitUntil("the kept acknowledgement adopted") { _, logs in
            logs.contains { $0.isLog("webhook.kept_ack_adopted", level: "info", ["webhook": "crm"]) }
        }
        try d.post([APIDaemon.sighting(major: 2)])
        _ = try d.waitForStatus("r2 held") { ($0["counts"] as? [String: Any])?["events_held"] as? Int == 1 }
        try FileManager.default.removeItem(atPath: filler)
        try receiver.waitUntil("r2, once there is room") { _ in receiver.acceptedIDs.count >= 2 }
        try d.post([APIDaemon.sighting(major: 3)])
        try receiver.waitUntil("r3") { _ in receiver.acceptedIDs.count >= 3 }
        let history = try d.history(type: "region.*")
        #expect(history.compactMap { ($0["data"] as? [String: Any])?["region"] as? String } == ["r1", "r2", "r3"])
        #expect(receiver.acceptedIDs == history.compactMap { $0["id"] as? String }, "each once, in order")
        #expect(!FileManager.default.fileExists(atPath: acks), "removed once the outbox took it")
        #expect(d.stop() == 0)
    }
}
