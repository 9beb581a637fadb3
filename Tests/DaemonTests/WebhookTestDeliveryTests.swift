import Foundation
import Synchronization
import TestSupport
import Testing

/// `beaconctl test-webhook` (`POST /v1/webhooks/{id}/test`): one signed event to a real
/// receiver, what it answered, and nothing stored or sent again.
@Suite(.serialized) struct WebhookTestDeliveryTests {
    func testWebhook(_ d: APIDaemon, _ id: String) throws -> CommandOutput {
        try runCommand(Executables.built("beaconctl"), ["--socket", d.socketPath, "test-webhook", id])
    }

    @Test func aTestEventReachesTheReceiverSignedAndIsNotKept() throws {
        let good = try WebhookReceiver(secret: "s3cret")
        let failing = try WebhookReceiver(fail: 100, failStatus: 500)
        let dir = try Executables.temporaryDirectory()
        let secret = dir.appendingPathComponent("hook.secret").path
        try "s3cret\n".write(toFile: secret, atomically: true, encoding: .utf8)
        let d = try APIDaemon(
            extra: "webhooks:\n" + WebhookDeliveryTests.webhook("crm", good, secretFile: secret)
                + WebhookDeliveryTests.webhook("wms", failing)
                + "  - {id: gone, url: \"http://127.0.0.1:9/hook\"}\n",
            dir: dir)
        try d.start()

        let sent = try testWebhook(d, "crm")
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(sent.stdout.hasPrefix("crm: HTTP 200 from \(good.url) in "), "\(sent.stdout)")
        #expect(sent.stdout.contains(", signed"))
        try good.waitUntil("the test request") { $0.count == 1 }
        let request = good.requests[0]
        #expect(request["types"] as? [String] == ["beacond.webhook.test"])
        #expect(request["signature_ok"] as? Bool == true)
        #expect(request["content_type"] as? String == "application/cloudevents-batch+json")

        let refused = try testWebhook(d, "wms")
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("wms: HTTP 500 from \(failing.url) after "), "\(refused.stderr)")
        let unreachable = try testWebhook(d, "gone")
        #expect(unreachable.status != 0)
        #expect(unreachable.stderr.contains("gone: ") && !unreachable.stderr.contains("HTTP"), "\(unreachable.stderr)")
        let unknown = try testWebhook(d, "nope")
        #expect(unknown.stderr.contains("no webhook \"nope\" in the configuration"), "\(unknown.stderr)")

        // Not an event of the gateway's: not in the history, not in any outbox, not sent again.
        #expect(try d.history().isEmpty)
        let outbox = try d.client.request("GET", "/v1/outbox").object
        let hooks = outbox["webhooks"] as? [[String: Any]] ?? []
        #expect(hooks.count == 3 && hooks.allSatisfy { ($0["pending"] as? Int) == 0 }, "\(outbox)")
        #expect(good.requests.count == 1)
        #expect(d.stop() == 0)
    }

    /// A receiver that hangs keeps the operator who asked waiting, up to the webhook's timeout,
    /// and no one else: before, the API's one thread waited with it, and status, metrics and
    /// the relays' sightings waited too. A second test of the same webhook meanwhile is 409.
    @Test func aReceiverThatHangsHoldsUpOnlyItsOwnTest() throws {
        let hanging = try WebhookReceiver(hang: true)
        let d = try APIDaemon(
            extra: "webhooks:\n" + WebhookDeliveryTests.webhook("wms", hanging, extra: ", timeout: 4s"))
        try d.start()
        let result = Mutex<CommandOutput?>(nil)
        let test = Thread { [self] in
            let output = try? testWebhook(d, "wms")
            result.withLock { $0 = output }
        }
        test.start()
        try hanging.waitUntil("the test request") { $0.count == 1 }

        let status = try d.client.request("GET", "/v1/status")
        #expect(status.status == 200)
        let again = try d.client.request("POST", "/v1/webhooks/wms/test")
        #expect(again.status == 409 && again.body.contains("a test of wms is still waiting"), "\(again.body)")
        #expect(result.withLock { $0 } == nil, "status and the second test were answered while the first waited")

        try? eventually("the test's answer") { result.withLock { $0 } != nil }
        let output = try #require(result.withLock { $0 })
        #expect(output.status != 0 && output.stderr.contains("wms: "), "\(output.stderr)")
        #expect(hanging.requests.count == 1, "the second test was not sent")
        #expect(d.stop() == 0)
    }

    /// A test the receiver acknowledges says it is back: what waits on the backoff is sent
    /// at once, not at the next attempt minutes later (issue 25: after a four-minute outage the
    /// first delivery came 165 s after the receiver was).
    @Test func anAcknowledgedTestSendsWhatWaitsOnTheBackoffAtOnce() throws {
        let receiver = try WebhookReceiver(fail: 4, failStatus: 500)
        let d = try APIDaemon(
            extra: "clients: [{id: app, regions: [{id: till, uuid: \(APIDaemon.uuid), major: 7}]}]\n"
                + "webhooks:\n" + WebhookDeliveryTests.webhook("crm", receiver))
        try d.start()
        try d.post([APIDaemon.sighting(major: 7)])
        // Four failures: the next attempt is 4-8 s away.
        try receiver.waitUntil("four failed deliveries") { $0.count == 4 }
        let sent = try testWebhook(d, "crm")
        #expect(sent.status == 0, "\(sent.stderr)")
        let answered = Date()
        try receiver.waitUntil("the delivery after the test", timeout: 10) { $0.count == 6 }
        #expect(Date().timeIntervalSince(answered) < 3, "sent at once, not at the backoff's next attempt")
        #expect(!receiver.acceptedIDs.isEmpty)
        #expect(d.daemon!.logs.contains { $0.isLog("webhook.retry_now", ["webhook": "crm"]) })
        #expect(d.stop() == 0)
    }
}
