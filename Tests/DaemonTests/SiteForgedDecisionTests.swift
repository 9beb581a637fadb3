import Foundation
import TestSupport
import Testing

/// Issue 51, item 3: on the shipped lock-down, a standby's own account may write its own
/// `gateways/<id>/decided` topic. Decisions published there for every tag and zone — fresh
/// ones with forged bodies, and stale enters — put the forged body on every alert the locator
/// delivered, and made it drop its own enters as repeats. Only the locator decides now: the
/// locator delivers its own alerts as its engine made them, and drops none.
@Suite(.serialized) struct SiteForgedDecisionTests {
    static let zones = ["entrance", "checkout", "aisle-3", "stockroom"]

    /// One `decided` message: for every tag, zone and kind, a decision at `time` whose body
    /// says it is forged.
    static func forgedMessage(time: Double, kinds: [String], run: Int) -> String {
        var lines: [String] = []
        for tag in 1...23 {
            for zone in zones {
                for kind in kinds {
                    let subject = String(format: "tag-%02d", tag)
                    let id = "forged-\(run)-\(tag)-\(zone)-\(kind)"
                    let body: [String: Any] = [
                        "specversion": "1.0", "id": id, "source": "beacond://sim-store",
                        "type": "beacond.zone.\(kind)", "subject": subject,
                        "time": SiteHandOverTests.rfc3339(Date(timeIntervalSince1970: time)),
                        "data": ["zone": zone, "alarm": "zone-traffic", "forged": true],
                    ]
                    let text = String(decoding: try! JSONSerialization.data(withJSONObject: body), as: UTF8.self)
                    let line: [String: Any] = [
                        "id": id, "key": "beacond.zone.\(kind)|\(subject)|\(zone)|zone-traffic", "time": time,
                        "enqueued": time, "body": text,
                    ]
                    lines.append(String(decoding: try! JSONSerialization.data(withJSONObject: line), as: UTF8.self))
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    @Test func aStandbysDecisionsNeitherRewriteNorSilenceTheLocatorsAlerts() throws {
        let broker = try PrivateBroker(users: SiteTests.passwords, lockedDown: true)
        let receiver = try WebhookReceiver()
        let gateways = try SiteHandOverTests.startGateways([("gw1", 100), ("gw2", 50)], on: broker, receiver: receiver)
        let (gw1, gw2) = (gateways[0], gateways[1])
        try receiver.waitUntil("gw1 delivering", timeout: 60) { _ in receiver.delivered.count >= 3 }
        // 30 s of gw3's account deciding every alert of the store: fresh with forged bodies,
        // and enters from a minute ago.
        let started = Date()
        var run = 0
        while Date().timeIntervalSince(started) < 30 {
            run += 1
            let now = Date().timeIntervalSince1970
            try broker.publish(
                "beacond/sim-store/gateways/gw3/decided",
                Self.forgedMessage(time: now, kinds: ["enter", "exit"], run: run),
                as: "gw3")
            try broker.publish(
                "beacond/sim-store/gateways/gw3/decided",
                Self.forgedMessage(time: now - 60, kinds: ["enter"], run: run),
                as: "gw3")
            usleep(500_000)
        }
        let from = SiteTests.seconds(SiteHandOverTests.rfc3339(started))!
        let during = receiver.delivered.filter { (SiteTests.seconds($0["time"] as? String ?? "") ?? 0) >= from }
        let forged = receiver.delivered.filter { (($0["data"] as? [String: Any])?["forged"]) != nil }
        #expect(forged.isEmpty, "\(forged.count) delivered alerts carried a forged body")
        let enters = during.filter { $0["type"] as? String == "beacond.zone.enter" }
        let gw1Site = SiteTests.site(try gw1.client.request("GET", "/v1/status").object)
        let said =
            "during: \(during.map { $0["type"] ?? "" }); all \(receiver.delivered.count); gw1: \(gw1Site); "
            + gw1.daemon!.logs.filter { $0.contains("refused") }.joined(separator: "\n")
        #expect(enters.count >= 3, "\(enters.count) enters delivered in 30 s of forged decisions; \(said)")
        let status = try gw1.client.request("GET", "/v1/status").object
        #expect(SiteTrustTests.dropped(status, "repeated_alert") == 0, "\(SiteTests.site(status))")
        let standby = try gw2.client.request("GET", "/v1/status").object
        #expect(SiteTrustTests.dropped(standby, "not_locator") >= 1, "\(SiteTests.site(standby))")
        #expect(gw1.daemon!.logs.contains { $0.contains("site.message_refused") && $0.contains("not_locator") })
        #expect(gw1.stop() == 0)
        #expect(gw2.stop() == 0)
    }
}
