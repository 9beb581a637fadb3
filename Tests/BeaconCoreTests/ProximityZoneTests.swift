import Testing

@testable import BeaconCore

/// Receiver-proximity zones (SPEC §2 `zones: [{receiver, within}]`): an asset is in one while
/// that receiver's own range to it is within `within` metres, with the same hysteresis as a
/// polygon's edge, so a tag hovering at the distance does not flap.
@Suite struct ProximityZoneTests {
    typealias T = AssetTrackerTests

    static func tracker() -> AssetTracker {
        var site = T.site(alarms: [
            AlarmDefinition(id: "door-watch", zones: ["door"], on: [.enter, .exit], confirm: .seconds(0))
        ])
        site.zones = [ZoneDefinition(id: "door", shape: .nearReceiver(receiver: "a", within: 2))]
        return AssetTracker(site: site, calibrations: T.calibrations, lostAfter: .seconds(30), start: T.t0)
    }

    /// Walks the cart through `path` (one point a second); the zone alerts with their second.
    static func walk(_ path: [Point]) -> [(second: Int, condition: AlarmDefinition.Condition)] {
        var tracker = Self.tracker()
        var alerts: [(Int, AlarmDefinition.Condition)] = []
        for (s, p) in path.enumerated() {
            for e in T.step(&tracker, at: p, time: T.t0 + .seconds(Int64(s))) {
                if case let .zone(a) = e.payload {
                    #expect(a.zone == "door" && a.alarm == "door-watch" && a.asset == "cart")
                    alerts.append((s, a.condition))
                }
            }
        }
        return alerts
    }

    @Test func nearTheReceiverIsInsideAndFarIsOutside() {
        // 10 s far (7 m from receiver a), 15 s at its foot (1 m), 10 s far again
        let far = Point(x: 5, y: 5)
        let near = Point(x: 0.7, y: 0.7)
        let path =
            Array(repeating: far, count: 10) + Array(repeating: near, count: 15) + Array(repeating: far, count: 10)
        let alerts = Self.walk(path)
        #expect(alerts.map(\.condition) == [.enter, .exit], "\(alerts)")
        #expect(
            alerts.first.map { (10...13).contains($0.second) } == true, "entered at \(alerts.first?.second ?? -1) s")
        #expect(alerts.last.map { (25...29).contains($0.second) } == true, "left at \(alerts.last?.second ?? -1) s")
    }

    /// Hovering across the zone's 2 m, 4 s at 1.7 m and 4 s at 2.4 m: one enter, no flapping
    /// (without the margin: an exit and an enter every 8 s).
    @Test func aTagHoveringAtTheDistanceDoesNotFlap() {
        let near = Array(repeating: Point(x: 0.7, y: 0.7), count: 10)
        let hover = (0..<48).map { s -> Point in
            let r = (s / 4) % 2 == 0 ? 2.4 : 1.7
            return Point(x: r / 2.0.squareRoot(), y: r / 2.0.squareRoot())
        }
        let alerts = Self.walk(near + hover)
        #expect(alerts.map(\.condition) == [.enter], "\(alerts)")
    }
}
