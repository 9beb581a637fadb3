import Foundation
import TestSupport
import Testing

/// One damaged page of the bodies the webhooks' backlog points at (issue 61, H1), found by the
/// daemon's check of the whole file at start: the backlog's rows are carried, their bodies are
/// not. Before, each was sent as an empty event (`[,,…]`): a strict receiver answered 400 and
/// every later alert waited behind the batch until `max_age`.
@Suite(.serialized) struct DamagedBodiesTests {
    @Test func alertsWhoseBodiesWereLostAreDeadLetteredAndLaterAlertsGoThrough() throws {
        let down = try WebhookReceiver(fail: 1_000_000, failStatus: 503)
        let d = try WebhookDeliveryTests.daemon(regions: 12, webhook: down)
        try d.start()
        try d.post((1...10).map { APIDaemon.sighting(major: $0) })
        let waiting = try d.waitForHistory("ten enters") { $0.count == 10 }.compactMap { $0["id"] as? String }
        try down.waitUntil("a refused request") { !$0.isEmpty }
        #expect(d.stop() == 0)

        try CrashRecoveryTests.overwriteRootPage(of: "event_body", in: d)
        down.stop()
        let strict = try WebhookReceiver(strict: true, again: down)

        try d.start()
        try d.daemon!.waitUntil("the damage found by the check") { _, logs in
            logs.contains { $0.isLog("state.corrupt_while_running", level: "error") && $0.contains("event_body") }
        }
        try d.post((11...12).map { APIDaemon.sighting(major: $0) })
        let fresh = try d.waitForHistory("two enters after the damage") { $0.count == 2 }
            .compactMap { $0["id"] as? String }
        try strict.waitUntil("the alerts after the damage delivered") { _ in
            Set(strict.acceptedIDs).isSuperset(of: fresh)
        }
        #expect(
            !strict.requests.contains { $0["status"] as? Int == 400 }, "no batch of empty events: \(strict.requests)")
        #expect(Set(strict.acceptedIDs).isDisjoint(with: waiting), "nothing sent without its body")

        let outbox = try d.client.request("GET", "/v1/outbox").object
        let letters = outbox["dead_letters"] as? [[String: Any]] ?? []
        #expect(Set(letters.compactMap { $0["id"] as? String }) == Set(waiting), "each lost alert named")
        #expect(letters.allSatisfy { $0["reason"] as? String == "body_lost" })
        #expect(
            d.daemon!.logs.contains {
                $0.isLog("webhook.dead_letters", level: "error", ["reason": "body_lost", "events": "10"])
            })
        #expect(d.stop() == 0)
    }
}
