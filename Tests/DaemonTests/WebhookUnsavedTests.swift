import Foundation
import TestSupport
import Testing

/// A webhook's worker whose own writes fail — a full disk, or another process holding the
/// state file's lock — while its receiver answers. Another process's lock makes the failure
/// certain: on a full disk a commit of a few 1 KiB pages can still land in the write-ahead
/// log's last block, already allocated, and the failing path would be taken only by luck.
/// The worker treats both the same way (a failed write is a failed write).
@Suite(.serialized) struct WebhookUnsavedTests {
    static func lockState(of d: APIDaemon) throws -> StateFileLock {
        try StateFileLock(path: d.dir.appendingPathComponent("state/beacond.sqlite").path)
    }

    /// A receiver acknowledges a batch while the worker cannot delete it from the outbox. It
    /// must not send it again and again meanwhile (it did: a loop of resends as fast as HTTP
    /// allowed, and a log line each); the delete is saved once the file takes writes again.
    @Test func aBatchAcknowledgedWhileTheStateCannotBeWrittenIsNotSentAgain() throws {
        let receiver = try WebhookReceiver(fail: 1)
        let d = try WebhookDeliveryTests.daemon(regions: 2, webhook: receiver)
        try d.start()
        try d.post([APIDaemon.sighting(major: 1)])
        // Refused once: the event waits in the outbox for the retry, a second later
        try receiver.waitUntil("the first refusal") { $0.count == 1 }
        let lock = try Self.lockState(of: d)
        defer { lock.release() }
        try receiver.waitUntil("the retry accepted") { _ in receiver.acceptedIDs.count == 1 }
        try d.daemon!.waitUntil("the acknowledgement not saved") { _, logs in
            logs.contains { $0.isLog("webhook.ack_not_saved", ["webhook": "crm"]) }
        }

        lock.release()
        try d.post([APIDaemon.sighting(major: 2)])
        _ = try d.waitForHistory("two region states") { $0.count == 2 }
        let expected = try d.history(type: "region.*").compactMap { $0["id"] as? String }
        try receiver.waitUntil("the second event") { _ in receiver.acceptedIDs.count >= 2 }
        #expect(receiver.acceptedIDs == expected, "the first event once, not resent while it could not be deleted")
        try d.daemon!.waitUntil("the acknowledgement saved") { _, logs in
            logs.contains { $0.isLog("webhook.ack_saved", ["webhook": "crm"]) }
        }
        #expect(d.daemon!.logs.filter { $0.contains("webhook.ack_not_saved") }.count == 1)
        let outbox = try d.client.request("GET", "/v1/outbox").object["webhooks"] as? [[String: Any]]
        #expect(outbox?.first?["pending"] as? Int == 0)
        #expect(d.stop() == 0)
    }

    /// A dead webhook's events due to expire while the worker cannot write: the expiry's
    /// write fails at every look (each second). Told once, and once more when it works (it
    /// was a line a second).
    @Test func anExpiryThatCannotBeWrittenIsToldOnce() throws {
        let down = try WebhookReceiver(fail: 1_000_000)
        let d = try WebhookDeliveryTests.daemon(regions: 2, webhook: down, extra: ", max_age: 1s")
        try d.start()
        try d.post([APIDaemon.sighting(major: 1)])
        try down.waitUntil("the first refusal") { $0.count >= 1 }
        let lock = try Self.lockState(of: d)
        defer { lock.release() }
        try d.daemon!.waitUntil("the expiry refused") { _, logs in
            logs.contains { $0.isLog("webhook.outbox_unreadable", ["webhook": "crm"]) }
        }
        usleep(2_500_000)  // two more looks, a second apart, while the file stays locked
        lock.release()
        try d.waitForStatus("the event dead-lettered") {
            ($0["outbox"] as? [String: Any])?["dead_letters"] as? Int == 1
        }
        try d.daemon!.waitUntil("the outbox readable again") { _, logs in
            logs.contains { $0.isLog("webhook.outbox_readable", ["webhook": "crm"], having: ["after_s"]) }
        }
        #expect(d.daemon!.logs.filter { $0.contains("webhook.outbox_unreadable") }.count == 1)
        #expect(d.stop() == 0)
    }
}
