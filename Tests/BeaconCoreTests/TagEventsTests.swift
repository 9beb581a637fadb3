import BeaconConfig
import Testing

@testable import BeaconCore

/// SPEC §7.4: `asset.battery_low` once per fall and re-armed above it; `asset.missing` after
/// `missing_after` with the last position; `asset.found` with how long it was missing.
@Suite struct TagEventsTests {
    static let t0 = AssetTrackerTests.t0

    /// A Ruuvi format 5 frame saying `millivolts` (the valid vector's other fields).
    static func ruuvi(millivolts: Int) -> [UInt8] {
        var p = Hex.decode("0512FC5394C37C0004FFFC040CAC364200CDCBB8334C884F")!
        let power = (millivolts - 1600) << 5 | 22
        (p[13], p[14]) = (UInt8(power >> 8), UInt8(power & 0xFF))
        return p
    }

    static func tagAlerts(_ events: [Event]) -> [TagAlert] {
        events.compactMap { if case let .tag(a) = $0.payload { return a } else { return nil } }
    }

    @Test func aLowBatteryIsToldOncePerFallAndReArmedAboveIt() throws {
        let config = try ConfigLoader.load(
            yaml: """
                receivers: [{id: hci0, position: {x: 0, y: 0}}]
                assets: [{id: fridge-2, beacon: {address: "CB:B8:33:4C:88:4F"}}]
                tags: {battery_low: {millivolts: 2500}}

                """, file: "beacond.yaml")
        var engine = BeaconEngine(configuration: config.engineConfiguration, start: Self.t0)
        var told: [(Int, Int?)] = []
        // 2,450 falls below; 2,400 and 2,560 (< 2,600) stay told; 2,620 and, ten minutes on,
        // 2,630 re-arm; 2,480 falls again.
        let minutes: [Int64] = [0, 1, 2, 3, 4, 14, 15, 16]
        for (i, mv) in [2600, 2450, 2400, 2560, 2620, 2630, 2480, 2470].enumerated() {
            let s = Sighting(
                time: Self.t0 + .minutes(minutes[i]), receiver: "hci0", address: "CB:B8:33:4C:88:4F", rssi: -60,
                manufacturerData: [ManufacturerDatum(company: 0x0499, payload: Self.ruuvi(millivolts: mv))])
            // (Ten minutes unheard, it is also missing, then found: not counted here.)
            for alert in Self.tagAlerts(engine.ingest(s)) where alert.condition == .batteryLow {
                told.append((i, alert.batteryMillivolts))
            }
        }
        #expect(told.map(\.0) == [1, 6] && told.map(\.1) == [2450, 2480], "\(told)")
    }

    /// Issue 51, item 11: a battery whose readings flap across the threshold each second raised
    /// one `asset.battery_low` per fall (30 in 30 s). It is told once: back for a moment does
    /// not re-arm it, back for `TagRules.rearmAfter` does.
    @Test func aFlappingBatteryIsToldOnce() throws {
        let config = try ConfigLoader.load(
            yaml: """
                receivers: [{id: hci0, position: {x: 0, y: 0}}]
                assets: [{id: fridge-2, beacon: {address: "CB:B8:33:4C:88:4F"}}]

                """, file: "beacond.yaml")
        var engine = BeaconEngine(configuration: config.engineConfiguration, start: Self.t0)
        var told = 0
        func hear(_ mv: Int, at t: Timestamp) {
            let s = Sighting(
                time: t, receiver: "hci0", address: "CB:B8:33:4C:88:4F", rssi: -60,
                manufacturerData: [ManufacturerDatum(company: 0x0499, payload: Self.ruuvi(millivolts: mv))])
            told += Self.tagAlerts(engine.ingest(s)).filter { $0.condition == .batteryLow }.count
        }
        for second in 0..<60 { hear(second % 2 == 0 ? 2400 : 2700, at: Self.t0 + .seconds(Int64(second))) }
        #expect(told == 1, "\(told) alerts for one flapping battery")
        // Replaced: back for good, then it falls again.
        for minute in 2...13 { hear(3000, at: Self.t0 + .minutes(Int64(minute))) }
        hear(2400, at: Self.t0 + .minutes(14))
        #expect(told == 2)
    }

    /// Heard at (2, 5) for 10 s, then silent: missing 60 s after it was last heard, with its
    /// last position; heard again 200 s later: found, missing for that long, placed again.
    @Test func aSilentTagIsMissingAndFoundAgain() {
        var site = AssetTrackerTests.site(alarms: [])
        site.tags.missingAfter = .seconds(60)
        var tracker = AssetTracker(
            site: site, calibrations: AssetTrackerTests.calibrations, lostAfter: .seconds(30), start: Self.t0)
        var events: [Event] = []
        for s in 0..<10 {
            events += AssetTrackerTests.step(&tracker, at: Point(x: 2, y: 5), time: Self.t0 + .seconds(Int64(s)))
        }
        for s in 10..<209 { tracker.tick(at: Self.t0 + .seconds(Int64(s)), events: &events) }
        var alerts = Self.tagAlerts(events)
        #expect(alerts.map(\.condition) == [.missing], "\(alerts)")
        let missing = events.first { if case .tag = $0.payload { return true } else { return false } }
        let lastHeard = Self.t0 + .seconds(9)
        #expect(missing?.time == lastHeard + .seconds(60))
        #expect(alerts.first?.lastSeen == lastHeard)
        if let p = alerts.first?.position { #expect(abs(p.position.x - 2) < 1 && abs(p.position.y - 5) < 1) }
        #expect(alerts.first?.position != nil && alerts.first?.positionAt != nil)
        events = AssetTrackerTests.step(&tracker, at: Point(x: 8, y: 5), time: Self.t0 + .seconds(209))
        alerts = Self.tagAlerts(events)
        #expect(alerts.map(\.condition) == [.found], "\(alerts)")
        if let found = alerts.first {
            // First heard again 0.8 s before the tick (five packets in the second before it).
            #expect(abs((found.missingFor?.seconds ?? 0) - 199.2) < 0.01, "\(String(describing: found.missingFor))")
            #expect(found.position.map { abs($0.position.x - 8) < 1.5 } == true)
        }
        // And it can go missing again.
        events = []
        for s in 210..<300 { tracker.tick(at: Self.t0 + .seconds(Int64(s)), events: &events) }
        #expect(Self.tagAlerts(events).map(\.condition) == [.missing])
    }
}

/// SPEC §7.2: a tag's state outlives a restart — its last position and last-seen, its
/// battery and whether that was told, whether it is missing.
@Suite struct TagRestartTests {
    static let t0 = AssetTrackerTests.t0

    static func tracker() -> AssetTracker {
        var site = AssetTrackerTests.site(alarms: [])
        site.tags.missingAfter = .seconds(60)
        return AssetTracker(
            site: site, calibrations: AssetTrackerTests.calibrations, lostAfter: .seconds(30), start: t0)
    }

    @Test func aMissingTagIsNotToldMissingAgainAfterARestartAndItsPlaceIsKept() throws {
        var before = Self.tracker()
        var events: [Event] = []
        for s in 0..<10 {
            events += AssetTrackerTests.step(&before, at: Point(x: 2, y: 5), time: Self.t0 + .seconds(Int64(s)))
        }
        for s in 10..<80 { before.tick(at: Self.t0 + .seconds(Int64(s)), events: &events) }
        #expect(TagEventsTests.tagAlerts(events).map(\.condition) == [.missing])
        let saved = before.snapshot()
        #expect(saved.count == 1 && saved[0].zones.isEmpty && saved[0].tag?.missingSince != nil)

        var after = Self.tracker()
        _ = after.restore(saved[0], now: Self.t0 + .seconds(300))
        let tag = try #require(after.tagStates.first)
        #expect(tag.lastSeen == Self.t0 + .seconds(9))
        #expect(tag.lastPosition.map { abs($0.position.x - 2) < 1 && abs($0.position.y - 5) < 1 } == true)
        events = []
        for s in 300..<500 { after.tick(at: Self.t0 + .seconds(Int64(s)), events: &events) }
        #expect(TagEventsTests.tagAlerts(events).isEmpty, "missing already, not again")
        events = AssetTrackerTests.step(&after, at: Point(x: 8, y: 5), time: Self.t0 + .seconds(500))
        let found = TagEventsTests.tagAlerts(events)
        #expect(found.map(\.condition) == [.found])
        #expect(
            abs((found.first?.missingFor?.seconds ?? 0) - 490.2) < 0.01, "from its last sighting before the restart")
    }

    /// A tag heard just before the gateway went down gets a minute from the restart before it
    /// can be missing, however long the gateway was down.
    @Test func aTagHeardBeforeTheRestartGetsAMinuteToBeHeardAgain() {
        var before = Self.tracker()
        for s in 0..<10 {
            _ = AssetTrackerTests.step(&before, at: Point(x: 2, y: 5), time: Self.t0 + .seconds(Int64(s)))
        }
        var after = Self.tracker()
        _ = after.restore(before.snapshot()[0], now: Self.t0 + .seconds(600))
        var events: [Event] = []
        for s in 600..<659 { after.tick(at: Self.t0 + .seconds(Int64(s)), events: &events) }
        #expect(TagEventsTests.tagAlerts(events).isEmpty)
        for s in 659..<700 { after.tick(at: Self.t0 + .seconds(Int64(s)), events: &events) }
        let missing = events.filter { if case .tag = $0.payload { true } else { false } }
        #expect(missing.count == 1 && missing.first?.time == Self.t0 + .seconds(660))
    }
}
