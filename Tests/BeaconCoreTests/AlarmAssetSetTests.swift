import Testing

@testable import BeaconCore

/// An alarm's `assets:` (SPEC §2): only those assets raise it; other alarms on the same zone
/// still see every asset.
@Suite struct AlarmAssetSetTests {
    typealias T = AssetTrackerTests

    @Test func onlyTheListedAssetsRaiseAnAlarm() {
        var site = T.site(alarms: [
            AlarmDefinition(id: "badges-only", zones: ["left"], on: [.enter], assets: ["badge"]),
            AlarmDefinition(id: "everyone", zones: ["left"], on: [.enter]),
        ])
        site.assets.append(AssetDefinition(id: "badge", tag: .address("AA:00:00:00:00:02")))
        var tracker = AssetTracker(site: site, calibrations: T.calibrations, lostAfter: .seconds(30), start: T.t0)
        var alerts: [ZoneAlert] = []
        // Both walk from the right half into the left one (and stay past the default confirm)
        for s in 0..<40 {
            let t = T.t0 + .seconds(Int64(s))
            let p = s < 8 ? Point(x: 8, y: 5) : Point(x: 2, y: 5)
            for asset in 0..<2 {
                for k in stride(from: 4, through: 0, by: -1) {
                    for r in T.corners {
                        tracker.observe(
                            asset: asset, receiver: r.id, rssi: T.rssi(at: p, from: r), frameRSSIAt1m: nil,
                            at: t - .milliseconds(200 * Int64(k)))
                    }
                }
            }
            var events: [Event] = []
            tracker.tick(at: t, events: &events)
            alerts += events.compactMap { if case let .zone(a) = $0.payload { return a } else { return nil } }
        }
        let pairs = alerts.map { "\($0.alarm)/\($0.asset)" }.sorted()
        #expect(pairs == ["badges-only/badge", "everyone/badge", "everyone/cart"], "\(pairs)")
    }
}
