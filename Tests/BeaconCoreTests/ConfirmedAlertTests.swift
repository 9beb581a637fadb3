import Testing

@testable import BeaconCore

/// SPEC §10, `alarms[].confirm` and `zone.flapping` (issue 62), on the injected clock: the
/// cart walked between the room's halves (`AssetTrackerTests`' site, the zone its left half).
@Suite struct ConfirmedAlertTests {
    typealias Site = AssetTrackerTests
    static let left = Point(x: 2, y: 5)
    static let right = Point(x: 8, y: 5)

    /// Walks the cart second by second (`where(s)`) and returns each second's alerts.
    static func walk(
        _ alarm: AlarmDefinition, seconds: Int, where place: (Int) -> Point,
        each: (Int, inout AssetTracker) -> Void = { _, _ in }
    ) -> [(second: Int, alert: ZoneAlert, time: Timestamp)] {
        var tracker = AssetTracker(
            site: Site.site(alarms: [alarm]), calibrations: Site.calibrations, lostAfter: .seconds(30), start: Site.t0)
        var out: [(Int, ZoneAlert, Timestamp)] = []
        for s in 0..<seconds {
            for e in Site.step(&tracker, at: place(s), time: Site.t0 + .seconds(Int64(s))) {
                if case let .zone(a) = e.payload { out.append((s, a, e.time)) }
            }
            each(s, &tracker)
        }
        return out
    }

    static func second(_ t: Timestamp?) -> Int { Int(((t ?? Site.t0) - Site.t0).seconds.rounded()) }

    @Test func aConfirmedEnterIsToldOnceConfirmAfterTheCrossingWithItsTime() throws {
        let alarm = AlarmDefinition(id: "watch", zones: ["left"], on: [.enter, .exit, .dwell], dwell: .seconds(15))
        #expect(alarm.confirm == .seconds(10), "the default")
        let alerts = Self.walk(alarm, seconds: 60) { $0 < 10 ? Self.right : Self.left }
        #expect(alerts.map(\.alert.condition) == [.enter, .dwell])
        let enter = try #require(alerts.first)
        let crossed = Self.second(enter.alert.crossedAt)
        #expect(crossed >= 10 && crossed <= 14, "crossed at \(crossed) s")  // the RSSI filters' lag
        #expect(enter.second - crossed == 10, "told \(enter.second - crossed) s after the crossing")
        // The dwell counts from the crossing, not from when the enter was told.
        let dwell = alerts[1]
        #expect(dwell.second - crossed == 15 && dwell.alert.dwell == .seconds(15))
        #expect(Self.second(dwell.alert.crossedAt) == crossed)
    }

    @Test func aWobbleShorterThanConfirmIsNeverTold() {
        // Right, 4 s on the left, back on the right for good.
        let wobble = { (s: Int) in (20..<24).contains(s) ? Self.left : Self.right }
        for confirm: Int64 in [5, 10, 30] {
            let alarm = AlarmDefinition(
                id: "watch", zones: ["left"], on: [.enter, .exit], confirm: .seconds(confirm))
            let alerts = Self.walk(alarm, seconds: 90, where: wobble)
            #expect(alerts.isEmpty, "confirm \(confirm) s: \(alerts.map(\.alert.condition))")
        }
        // The edge rule alone tells it, both ways.
        let instant = AlarmDefinition(id: "watch", zones: ["left"], on: [.enter, .exit], confirm: .seconds(0))
        #expect(Self.walk(instant, seconds: 90, where: wobble).map(\.alert.condition) == [.enter, .exit])
    }

    @Test func theMembershipEveryOutputShowsFollowsTheAlarm() {
        let alarm = AlarmDefinition(id: "watch", zones: ["left"], on: [.enter], confirm: .seconds(20))
        var told: Int?
        var shownInside: [Int] = []
        let alerts = Self.walk(alarm, seconds: 60, where: { $0 < 10 ? Self.right : Self.left }) { s, tracker in
            if tracker.fixes.first?.fix?.zones == ["left"] { shownInside.append(s) }
            if tracker.occupancy["left"] == 1, told == nil { told = s }
        }
        // Inside for every output from the second its enter was told, not before.
        #expect(alerts.count == 1)
        #expect(shownInside.first == alerts.first?.second && told == alerts.first?.second)
    }

    /// Four changes within two minutes: the fourth is `zone.flapping` instead; settled for two
    /// minutes, one `zone.flapping` end with the membership, and the exit that makes the
    /// consumer's state right (it was last told inside).
    @Test func aFlappingAssetIsToldOnceAndAgainWithWhereItSettled() throws {
        let alarm = AlarmDefinition(id: "watch", zones: ["left"], on: [.enter, .exit], confirm: .seconds(0))
        // 12 s a side, from the right, for 100 s; then on the right for good.
        let place = { (s: Int) in s < 100 && (s / 12) % 2 == 1 ? Self.left : Self.right }
        let alerts = Self.walk(alarm, seconds: 400, where: place)
        #expect(alerts.map(\.alert.condition) == [.enter, .exit, .enter, .flapping, .flapping, .exit])
        let began = try #require(alerts[3].alert.flap)
        #expect(began.settled == nil && began.changes == 4)
        #expect(began.since == alerts[0].alert.crossedAt, "since the first change of the run")
        let ended = try #require(alerts[4].alert.flap)
        #expect(ended.settled == false && ended.changes >= 4 && ended.since == began.since)
        // Settled once the edge rule had said the same for two minutes after its last change
        // (back on the right at 96 s, seen there within the filters' lag).
        #expect(alerts[4].second >= 96 + 120 && alerts[4].second <= 100 + 125, "ended at \(alerts[4].second) s")
        #expect(alerts[5].second == alerts[4].second)
        #expect(Self.second(alerts[5].alert.crossedAt) < 100)
    }

    /// A replayed trace that ends 5 s into a 10 s confirm: the crossing is decided with what
    /// there is and told, as its visit is (contract §5, issue 62 item 4).
    @Test func aTracesEndDecidesTheCrossingBeingWeighed() throws {
        let alarm = AlarmDefinition(id: "watch", zones: ["left"], on: [.enter, .exit])
        var tracker = AssetTracker(
            site: Site.site(alarms: [alarm]), calibrations: Site.calibrations, lostAfter: .seconds(30), start: Site.t0)
        var crossed: Int?
        var s = 0
        while crossed.map({ s < $0 + 5 }) ?? true, s < 60 {
            _ = Site.step(&tracker, at: s < 10 ? Self.right : Self.left, time: Site.t0 + .seconds(Int64(s)))
            if crossed == nil, tracker.edgeSays(of: "cart") == [true] { crossed = s }
            s += 1
        }
        var events: [Event] = []
        tracker.finishVisits(at: Site.t0 + .seconds(Int64(s)), events: &events)
        let alerts = events.compactMap { if case let .zone(a) = $0.payload { a } else { nil } }
        #expect(alerts.map(\.condition) == [.enter], "\(alerts)")
        #expect(Self.second(alerts.first?.crossedAt) == crossed)
    }

    @Test func aReloadThatChangesConfirmWeighsWhatIsPendingByTheNewOne() throws {
        let slow = AlarmDefinition(id: "watch", zones: ["left"], on: [.enter], confirm: .seconds(40))
        var tracker = AssetTracker(
            site: Site.site(alarms: [slow]), calibrations: Site.calibrations, lostAfter: .seconds(30), start: Site.t0)
        var alerts: [(Int, ZoneAlert)] = []
        for s in 0..<60 {
            if s == 25 {
                var fast = slow
                fast.confirm = .seconds(5)
                var reloaded = AssetTracker(
                    site: Site.site(alarms: [fast]), calibrations: Site.calibrations, lostAfter: .seconds(30),
                    start: Site.t0 + .seconds(25))
                reloaded.adopt(from: tracker)
                tracker = reloaded
            }
            for e in Site.step(&tracker, at: s < 10 ? Self.right : Self.left, time: Site.t0 + .seconds(Int64(s))) {
                if case let .zone(a) = e.payload { alerts.append((s, a)) }
            }
        }
        // Crossed at 10–14 s: not told by 25 s at 40 s; weighed at 5 s after the reload, told
        // at the reload's first tick, once, with the crossing's time.
        #expect(alerts.count == 1)
        let enter = try #require(alerts.first)
        #expect(enter.0 == 25 && Self.second(enter.1.crossedAt) <= 14, "told at \(enter.0) s")
    }
}
