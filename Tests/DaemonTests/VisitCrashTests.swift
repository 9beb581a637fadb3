import BeaconCore
import Foundation
import TestSupport
import Testing

/// A `kill -9` between a visit's telling and the storing of its exit (issue 61, M3): a visit's
/// exit waits `visit_lag + min_visit` to be stored, in order, while its `zone.visit` is stored
/// as soon as it is told. Before, the next start resumed the visit and told it again under a
/// new id, its dwell running on to the restart, and the roll-ups counted the longer one.
@Suite(.serialized) struct VisitCrashTests {
    /// Telling and storing 10 s apart: `zone.visit` 10 s after the pallet left, its exit 20 s.
    static let site = AssetAPITests.site + "analytics: {visit_lag: 10s, rejoin: 1s, min_visit: 10s}\n"

    @Test func aVisitToldBeforeAKillIsToldOnceAndCountedAsTold() throws {
        let d = try APIDaemon(extra: Self.site)
        try d.start()
        try ZoneAnalyticsTests.hear(d, at: (2, 5), until: 1, "enter")
        try ZoneAnalyticsTests.hear(d, at: (2, 5), untilTotal: "visits", is: 1)
        try ZoneAnalyticsTests.hear(d, at: (8, 5), until: 1, "visit")
        let told = try ZoneAnalyticsTests.fromHistory(d)
        d.crash()

        try d.start()
        // Heard outside for longer than a visit takes to be told.
        let until = Date().addingTimeInterval(15)
        while Date() < until {
            try d.post(AssetAPITests.sightings(at: (8, 5)))
            usleep(200_000)
        }
        let after = try ZoneAnalyticsTests.fromHistory(d)
        #expect(after.visits == 1, "told once: \(after)")
        #expect(after.dwells == told.dwells)
        let total = try #require(ZoneAnalyticsTests.stats(d)["total"] as? [String: Any])
        #expect(total["visits"] as? Int == 1 && total["dwell_count"] as? Int == 1, "\(total)")
        #expect(abs((total["dwell_max_s"] as? Double ?? 0) - (told.dwells.first ?? -1)) < 0.002, "\(total) \(told)")
        #expect(d.daemon!.logs.contains { $0.isLog("analytics.reconciled", ["told_before": "1"]) })
        #expect(d.stop() == 0)
    }
}
