import Testing

@testable import BeaconCore

/// `positioning.publish_interval` and `min_move` (SPEC §2): an asset standing still is not
/// published again and again, and a walking one at most once an interval, each time at least
/// `min_move` from the last position published.
@Suite struct PublishChatterTests {
    typealias T = AssetTrackerTests

    static func fixes(along path: (Int) -> Point, seconds: Int) -> [(t: Timestamp, fix: AssetFix)] {
        var site = T.site(alarms: [])
        site.positioning.publishInterval = .seconds(2)
        site.positioning.minMove = 0.5
        var tracker = AssetTracker(site: site, calibrations: T.calibrations, lostAfter: .seconds(30), start: T.t0)
        var fixes: [(Timestamp, AssetFix)] = []
        for s in 0..<seconds {
            let t = T.t0 + .seconds(Int64(s))
            for e in T.step(&tracker, at: path(s), time: t) {
                if case let .assetPosition(f) = e.payload { fixes.append((t, f)) }
            }
        }
        return fixes
    }

    @Test func aStandingAssetIsNotPublishedOverAndOver() {
        let fixes = Self.fixes(along: { _ in Point(x: 3, y: 4) }, seconds: 60)
        // The first fix, and at most a couple while the belief settles within the first seconds
        #expect(fixes.count >= 1 && fixes.count <= 3, "\(fixes.count) positions in a minute standing")
        #expect(fixes.allSatisfy { $0.t - T.t0 <= .seconds(10) }, "nothing after it settled")
    }

    @Test func aWalkingAssetIsPublishedAtMostOnceAnIntervalAndOnlyWhenItMoved() {
        // Walking along y = 5 at 0.5 m/s for 30 s
        let fixes = Self.fixes(along: { s in Point(x: 1 + 0.25 * Double(s), y: 5) }, seconds: 30)
        #expect(fixes.count >= 5, "it moved 7.5 m: \(fixes.count) positions")
        for (a, b) in zip(fixes, fixes.dropFirst()) {
            #expect(b.t - a.t >= .seconds(2), "publish_interval")
            let dx = b.fix.position.x - a.fix.position.x
            let dy = b.fix.position.y - a.fix.position.y
            #expect((dx * dx + dy * dy).squareRoot() >= 0.5 || b.fix.zones != a.fix.zones, "min_move")
        }
    }
}
