import Foundation
import TestSupport
import Testing

/// SPEC §10: `zone.visit` goes wherever the other events go. The live daemon on a simulated
/// floor with one zone and no alarm at all (visits need none): its visits reach the history,
/// the live stream and a webhook, each with the data the contract documents, and the zone's
/// roll-ups count them.
@Suite struct ZoneVisitOutputTests {
    static func config(_ receiver: WebhookReceiver) -> String {
        """
        receivers:
          - {id: r1, position: {x: 0, y: 0}, rssi_at_1m: -59}
          - {id: r2, position: {x: 12, y: 0}, rssi_at_1m: -59}
          - {id: r3, position: {x: 0, y: 8}, rssi_at_1m: -59}
          - {id: r4, position: {x: 12, y: 8}, rssi_at_1m: -59}
        assets:
        \((1...4).map { "  - {id: tag-\($0), beacon: {address: \"D0:5E:00:00:00:0\($0)\"}}" }.joined(separator: "\n"))
        zones:
          - {id: west, level: 0, polygon: [[0, 0], [6, 0], [6, 8], [0, 8]]}
        analytics: {visit_lag: 15s, rejoin: 5s, min_visit: 2s}
        positioning: {publish_interval: 1s, min_move: 0, floor: [[0, 0], [12, 0], [12, 8], [0, 8]]}
        simulation:
          floor: {width: 12, depth: 8}
          packet_loss: 0
          pause: [1s, 4s]
          walking_speed: [1, 1.4]
          zone_visits: 0.5
        webhooks:
          - {id: wms, url: "\(receiver.url)", events: ["zone.visit"], batch: {max_events: 50, max_delay: 0s}}

        """
    }

    @Test func visitsReachTheHistoryTheStreamAndAWebhook() throws {
        let receiver = try WebhookReceiver()
        let d = try APIDaemon(extra: Self.config(receiver))
        try d.start(arguments: ["--simulate", "--no-print-events"])
        let stream = try d.client.stream(query: "?type=zone.visit")
        defer { stream.close() }
        let history = try d.waitForHistory("a visit told", timeout: 120) {
            $0.contains { $0["type"] as? String == "beacond.zone.visit" }
        }
        let visits = history.filter { $0["type"] as? String == "beacond.zone.visit" }
        for visit in visits {
            let data = try #require(visit["data"] as? [String: Any])
            #expect(data["zone"] as? String == "west")
            #expect((data["asset"] as? String)?.hasPrefix("tag-") == true)
            #expect(visit["subject"] as? String == data["asset"] as? String)
            let entered = try #require((data["entered"] as? String).flatMap(PositionStateCrashTests.times.date(from:)))
            let left = try #require((data["left"] as? String).flatMap(PositionStateCrashTests.times.date(from:)))
            let dwell = try #require(data["dwell_s"] as? Double)
            // At least min_visit, and the dwell is what its times say.
            #expect(dwell >= 2 && abs(left.timeIntervalSince(entered) - dwell) < 0.01, "\(data)")
        }
        // The stream, asked for visits alone, gets them.
        let first = try #require(try stream.next(timeout: 60), "no event on the stream")
        #expect(first.event == "beacond.zone.visit", "\(first)")
        // The webhook, asked for visits alone, is given the history's visits under their ids.
        let ids = Set(visits.compactMap { $0["id"] as? String })
        try receiver.waitUntil("the visits delivered", timeout: 30) { _ in ids.isSubset(of: Set(receiver.acceptedIDs)) }
        #expect(receiver.delivered.allSatisfy { $0["type"] as? String == "beacond.zone.visit" })
        // A clean stop stores every visit's end still settling: started again without input,
        // the roll-ups count as many visits ended as the history tells, with their dwells.
        #expect(d.stop() == 0)
        try d.start(arguments: ["--no-print-events"])
        let told = try d.history(type: "zone.visit").compactMap {
            ($0["data"] as? [String: Any])?["dwell_s"] as? Double
        }
        let total = try d.client.request("GET", "/v1/zones/west/stats?from=3h").object["total"] as? [String: Any]
        #expect(total?["dwell_count"] as? Int == told.count, "\(String(describing: total)) against \(told)")
        #expect(
            abs((total?["dwell_max_s"] as? Double ?? -1) - (told.max() ?? -2)) < 0.002, "\(String(describing: total))")
        #expect((total?["visits"] as? Int ?? 0) >= told.count)
        #expect(d.stop() == 0)
    }
}
