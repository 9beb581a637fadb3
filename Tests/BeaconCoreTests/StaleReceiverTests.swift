import Testing

@testable import BeaconCore

/// A receiver that stops hearing an asset (its relay went offline, the tag moved behind a
/// wall) ages out of the asset's fix: its last reading is not used for ever.
@Suite struct StaleReceiverTests {
    typealias T = AssetTrackerTests

    @Test func aReceiverThatStopsHearingAgesOutOfTheFix() throws {
        var tracker = AssetTracker(
            site: T.site(alarms: []), calibrations: T.calibrations, lostAfter: .seconds(30), start: T.t0)
        let p = Point(x: 3, y: 4)
        for s in 0..<10 { _ = T.step(&tracker, at: p, time: T.t0 + .seconds(Int64(s))) }
        #expect(tracker.fixes[0].fix?.receivers.sorted() == ["a", "b", "c", "d"])
        // "d" goes quiet; the others go on
        let three = Array(T.corners.prefix(3))
        var receiversUsed: [[String]] = []
        for s in 10..<30 {
            _ = T.step(&tracker, at: p, time: T.t0 + .seconds(Int64(s)), receivers: three)
            receiversUsed.append(tracker.fixes[0].fix?.receivers.sorted() ?? [])
        }
        #expect(receiversUsed.first == ["a", "b", "c", "d"], "a moment's silence is not yet staleness")
        #expect(receiversUsed.last == ["a", "b", "c"])
        let fix = try #require(tracker.fixes[0].fix)
        #expect(abs(fix.position.x - p.x) < 0.6 && abs(fix.position.y - p.y) < 0.6, "still placed by the other three")
        let agedOutAfter = receiversUsed.firstIndex { !$0.contains("d") }.map { $0 + 1 } ?? -1
        let freshness = Int(AssetTracker.readingFreshness.seconds)
        #expect(agedOutAfter >= freshness && agedOutAfter <= freshness + 1, "aged out after \(agedOutAfter) s")
    }
}
