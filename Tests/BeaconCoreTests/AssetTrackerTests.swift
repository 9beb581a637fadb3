import Testing

@testable import BeaconCore

#if canImport(Glibc)
    import Glibc
#endif

/// Asset positions, zones and alarms on an explicit clock.
@Suite struct AssetTrackerTests {
    static let t0 = Timestamp.seconds(1_000_000)
    /// Four receivers at the corners of a 10 × 10 m room, calibrated -59 dBm at 1 m, n = 2.
    static let corners = [
        SiteReceiver(id: "a", position: Point(x: 0, y: 0), level: 0),
        SiteReceiver(id: "b", position: Point(x: 10, y: 0), level: 0),
        SiteReceiver(id: "c", position: Point(x: 10, y: 10), level: 0),
        SiteReceiver(id: "d", position: Point(x: 0, y: 10), level: 0),
    ]
    static let calibrations = Dictionary(
        uniqueKeysWithValues: corners.map { ($0.id, ReceiverCalibration(rssiAt1m: -59)) })

    static func site(alarms: [AlarmDefinition], hysteresis: Double = 1.0, receivers: [SiteReceiver] = corners)
        -> SiteConfiguration
    {
        var positioning = PositioningSettings()
        positioning.publishInterval = .seconds(1)
        positioning.minMove = 0
        positioning.maxSpeed = 100
        positioning.zoneHysteresis = hysteresis
        return SiteConfiguration(
            receivers: receivers, assets: [AssetDefinition(id: "cart", tag: .address("AA:00:00:00:00:01"))],
            zones: [
                ZoneDefinition(
                    id: "left",
                    shape: .polygon(
                        level: 0,
                        points: [
                            Point(x: 0, y: 0), Point(x: 5, y: 0), Point(x: 5, y: 10), Point(x: 0, y: 10),
                        ]))
            ], alarms: alarms, positioning: positioning)
    }

    /// The RSSI each receiver would hear at `p` (log-distance, n = 2), noise-free.
    static func rssi(at p: Point, from r: SiteReceiver) -> Int {
        let d = max(
            ((p.x - r.position.x) * (p.x - r.position.x) + (p.y - r.position.y) * (p.y - r.position.y)).squareRoot(),
            0.1)
        return Int((-59 - 20 * log10(d)).rounded())
    }

    /// Hears the cart at `p` from every receiver five times in the second before `t` (a tag
    /// advertising at 5 Hz), then ticks; returns the events.
    static func step(_ tracker: inout AssetTracker, at p: Point, time t: Timestamp, receivers: [SiteReceiver] = corners)
        -> [Event]
    {
        for k in stride(from: 4, through: 0, by: -1) {
            for r in receivers {
                tracker.observe(
                    asset: 0, receiver: r.id, rssi: rssi(at: p, from: r), frameRSSIAt1m: nil,
                    at: t - .milliseconds(200 * Int64(k)))
            }
        }
        var events: [Event] = []
        tracker.tick(at: t, events: &events)
        return events
    }

    /// A cart with an enter/exit alarm on the left zone, heard at (2, 3) for the first 12 s
    /// (it has entered); the events of those seconds.
    static func cartInsideLeft() -> (tracker: AssetTracker, events: [Event]) {
        let alarm = AlarmDefinition(id: "watch", zones: ["left"], on: [.enter, .exit])
        var tracker = AssetTracker(
            site: site(alarms: [alarm]), calibrations: calibrations, lostAfter: .seconds(30), start: t0)
        var events: [Event] = []
        for s in 0..<12 { events += step(&tracker, at: Point(x: 2, y: 3), time: t0 + .seconds(Int64(s))) }
        return (tracker, events)
    }

    func zoneEvents(_ events: [Event]) -> [ZoneAlert] {
        events.compactMap { if case let .zone(a) = $0.payload { return a } else { return nil } }
    }

    @Test func receiversWithNoPositionAreCountedNotUsed() {
        var tracker = AssetTracker(
            site: Self.site(alarms: []), calibrations: Self.calibrations, lostAfter: .seconds(30), start: Self.t0)
        tracker.observe(asset: 0, receiver: "gw-9", rssi: -60, frameRSSIAt1m: nil, at: Self.t0)
        tracker.observe(asset: 0, receiver: "gw-9", rssi: -61, frameRSSIAt1m: nil, at: Self.t0)
        #expect(tracker.unplacedReceivers == ["gw-9": 2])
        #expect(tracker.fixes[0].lastHeard == nil, "not heard by any receiver it can use")
        // Garbage names from a broken relay cannot grow it without bound
        for i in 0..<100 {
            tracker.observe(asset: 0, receiver: "junk-\(i)", rssi: -60, frameRSSIAt1m: nil, at: Self.t0)
        }
        #expect(tracker.unplacedReceivers.count == AssetTracker.unplacedLimit)
        #expect(tracker.unplacedReceivers["gw-9"] == 2)
    }

    @Test func positionsFollowTheAssetAndNameItsZones() throws {
        var tracker = AssetTracker(
            site: Self.site(alarms: []), calibrations: Self.calibrations, lostAfter: .seconds(30), start: Self.t0)
        var fix: AssetFix?
        for s in 0..<12 {
            for e in Self.step(&tracker, at: Point(x: 2, y: 3), time: Self.t0 + .seconds(Int64(s))) {
                if case let .assetPosition(f) = e.payload { fix = f }
            }
        }
        let f = try #require(fix)
        // Whole-dBm readings alone leave up to ±6 % in each range (here -1.5 %, +4 %, +5.5 %,
        // -3 %): about 0.4 m; exact ranges give centimetres (MultilaterationTests)
        #expect(abs(f.position.x - 2) < 0.5 && abs(f.position.y - 3) < 0.5, "at \(f.position.x), \(f.position.y)")
        #expect(f.zones == ["left"] && f.receivers.count == 4 && f.accuracy > 0 && f.accuracy < 2)
    }

    /// At `confirm: 0s`, the edge rule as it is: each told at the crossing.
    @Test func alarmsRaiseEnterDwellAndExitOnceEach() {
        let alarm = AlarmDefinition(
            id: "watch", zones: ["left"], on: [.enter, .exit, .dwell], dwell: .seconds(5), confirm: .seconds(0))
        var tracker = AssetTracker(
            site: Self.site(alarms: [alarm]), calibrations: Self.calibrations, lostAfter: .seconds(30), start: Self.t0)
        var alerts: [(Int, ZoneAlert)] = []
        // 10 s on the right, 15 s on the left, 10 s on the right
        for s in 0..<35 {
            let p = (10..<25).contains(s) ? Point(x: 2, y: 5) : Point(x: 8, y: 5)
            alerts += zoneEvents(Self.step(&tracker, at: p, time: Self.t0 + .seconds(Int64(s)))).map { (s, $0) }
        }
        #expect(alerts.map(\.1.condition) == [.enter, .dwell, .exit])
        let enter = alerts[0].0
        #expect(enter >= 10 && enter <= 14, "entered at \(enter) s")  // the RSSI filters' lag
        #expect(alerts[1].0 - enter == 5 && alerts[1].1.dwell == .seconds(5))
        #expect(alerts[2].0 >= 25 && alerts[2].0 <= 29)
        #expect(alerts.allSatisfy { $0.1.alarm == "watch" && $0.1.asset == "cart" && $0.1.zone == "left" })
    }

    @Test func aPositionJitteringOnTheEdgeNeverFlaps() {
        let alarm = AlarmDefinition(id: "watch", zones: ["left"], on: [.enter, .exit])
        var tracker = AssetTracker(
            site: Self.site(alarms: [alarm]), calibrations: Self.calibrations, lostAfter: .seconds(30), start: Self.t0)
        var alerts: [ZoneAlert] = []
        // Well inside first, then ±0.4 m around the edge at x = 5 for two minutes
        for s in 0..<10 {
            alerts += zoneEvents(Self.step(&tracker, at: Point(x: 2, y: 5), time: Self.t0 + .seconds(Int64(s))))
        }
        for s in 10..<130 {
            let x = s % 2 == 0 ? 4.6 : 5.4
            alerts += zoneEvents(Self.step(&tracker, at: Point(x: x, y: 5), time: Self.t0 + .seconds(Int64(s))))
        }
        #expect(alerts.map(\.condition) == [.enter], "one enter, no flapping")
        // Without hysteresis the same walk flaps
        var bare = AssetTracker(
            site: Self.site(alarms: [alarm], hysteresis: 0), calibrations: Self.calibrations, lostAfter: .seconds(30),
            start: Self.t0)
        var flaps = 0
        var said = true
        for s in 0..<130 {
            let x = s < 10 ? 2 : (s % 2 == 0 ? 4.3 : 5.7)
            _ = Self.step(&bare, at: Point(x: x, y: 5), time: Self.t0 + .seconds(Int64(s)))
            let now = bare.edgeSays(of: "cart")?.first ?? false
            if s >= 10, now != said { flaps += 1 }
            said = now
        }
        #expect(flaps > 10, "the edge rule's say changes")
    }

    @Test func inactiveAlarmsStaySilentAndASilentAssetLeavesItsZones() {
        let alarm = AlarmDefinition(
            id: "watch", zones: ["left"], on: [.enter, .exit], active: false, confirm: .seconds(0))
        var tracker = AssetTracker(
            site: Self.site(alarms: [alarm]), calibrations: Self.calibrations, lostAfter: .seconds(30), start: Self.t0)
        var alerts: [ZoneAlert] = []
        for s in 0..<5 {
            alerts += zoneEvents(Self.step(&tracker, at: Point(x: 2, y: 5), time: Self.t0 + .seconds(Int64(s))))
        }
        #expect(alerts.isEmpty)
        #expect(tracker.setAlarm("watch", active: true) && !tracker.setAlarm("nope", active: true))
        // No retroactive enter; the asset then goes silent: an exit 30 s after it was last heard
        var events: [Event] = []
        for s in 5..<40 { tracker.tick(at: Self.t0 + .seconds(Int64(s)), events: &events) }
        let exits = zoneEvents(events)
        #expect(exits.map(\.condition) == [.exit])
        #expect(exits.first?.position != nil, "the last known position")
    }

    @Test func oneReceiverPlacesTheAssetAtIt() throws {
        let one = [Self.corners[0]]
        var tracker = AssetTracker(
            site: Self.site(alarms: [], receivers: one), calibrations: Self.calibrations, lostAfter: .seconds(30),
            start: Self.t0)
        let events = Self.step(&tracker, at: Point(x: 3, y: 4), time: Self.t0, receivers: one)
        guard case let .assetPosition(fix)? = events.first?.payload else {
            Issue.record("no position")
            return
        }
        #expect(fix.position == Point(x: 0, y: 0) && abs(fix.accuracy - 5) < 0.3)
    }

    @Test func theStrongestReceiversChooseTheLevel() {
        let receivers = Self.corners + [SiteReceiver(id: "up", position: Point(x: 5, y: 5), level: 1)]
        var tracker = AssetTracker(
            site: Self.site(alarms: [], receivers: receivers), calibrations: Self.calibrations, lostAfter: .seconds(30),
            start: Self.t0)
        // Loud upstairs only: level 1
        tracker.observe(asset: 0, receiver: "up", rssi: -50, frameRSSIAt1m: nil, at: Self.t0)
        tracker.observe(asset: 0, receiver: "a", rssi: -90, frameRSSIAt1m: nil, at: Self.t0)
        var events: [Event] = []
        tracker.tick(at: Self.t0, events: &events)
        guard case let .assetPosition(fix)? = events.first?.payload else {
            Issue.record("no position")
            return
        }
        #expect(fix.level == 1 && fix.receivers == ["up"])
    }

    @Test func aFixNeverJumpsFasterThanMaxSpeed() {
        var site = Self.site(alarms: [])
        site.positioning.maxSpeed = 1
        var tracker = AssetTracker(site: site, calibrations: Self.calibrations, lostAfter: .seconds(30), start: Self.t0)
        var xs: [Double] = []
        for s in 0..<6 {
            let p = s < 3 ? Point(x: 1, y: 5) : Point(x: 9, y: 5)
            for e in Self.step(&tracker, at: p, time: Self.t0 + .seconds(Int64(s))) {
                if case let .assetPosition(f) = e.payload { xs.append(f.position.x) }
            }
        }
        for (a, b) in zip(xs, xs.dropFirst()) { #expect(abs(b - a) <= 1.0 + 1e-9) }
    }
}
