import Testing

@testable import BeaconCore

/// A long silence in a trace (days between two recordings, or a corrupt `t` decades ahead)
/// is crossed without running every periodic tick in it (`BeaconEngine.skipQuietTicks`),
/// and gives exactly the events that ticking through it gives.
@Suite struct QuietGapTests {
    typealias T = AssetTrackerTests
    static let alarm = AlarmDefinition(id: "watch", zones: ["left"], on: [.enter, .exit])

    /// A store region (ranged, with a 5 min dwell) and a cart on the left of the site, both
    /// heard for the first 20 s.
    static func heardForTwentySeconds() -> BeaconEngine {
        var engine = BeaconEngine(
            configuration: EngineConfiguration(
                clients: [
                    ClientSpec(id: "app", regions: [Fixture.region("store", dwell: [.minutes(5)], ranging: true)])
                ],
                receivers: T.calibrations, site: T.site(alarms: [alarm])),
            start: Fixture.at(0))
        for s in 0...20 { hear(&engine, at: Double(s)) }
        return engine
    }

    /// The store's beacon and the cart heard once each; the events that caused.
    @discardableResult static func hear(_ engine: inout BeaconEngine, at seconds: Double) -> [Event] {
        var events = engine.ingest(Fixture.sighting(seconds))
        for r in T.corners {
            let rssi = T.rssi(at: Point(x: 2, y: 5), from: r)
            events += engine.ingest(
                Sighting(time: Fixture.at(seconds + 0.1), receiver: r.id, address: "AA:00:00:00:00:01", rssi: rssi))
        }
        return events
    }

    @Test func threeSilentHoursInOneStepGiveTheEventsOfTicking() {
        var stepped = Self.heardForTwentySeconds()
        var leapt = stepped
        var ticked: [Event] = []
        for minute in 1...180 { ticked += stepped.advance(to: Fixture.at(20 + Double(minute) * 60)) }
        let crossed = leapt.advance(to: Fixture.at(20 + 180 * 60))
        #expect(crossed == ticked)
        // The cart lost and out of its zone, the region exited, ranging emptied: all in the gap
        #expect(crossed.contains { if case .zone = $0.payload { return true } else { return false } })
        #expect(crossed.contains { if case .regionExit = $0.payload { return true } else { return false } })
        // After the gap both are heard again: the same events, positions on the same tick phase
        let heard = Self.hear(&stepped, at: 20 + 180 * 60 + 0.5)
        #expect(Self.hear(&leapt, at: 20 + 180 * 60 + 0.5) == heard)
        let later = stepped.advance(to: Fixture.at(20 + 180 * 60 + 10))
        #expect(leapt.advance(to: Fixture.at(20 + 180 * 60 + 10)) == later)
        let after = heard + later
        #expect(after.contains { if case .assetPosition = $0.payload { return true } else { return false } })
    }

    /// Found by `fuzz/run sightings`: a record 56 years after the one before it ran a position
    /// tick for every second in between, a replay that never ended.
    @Test(.timeLimit(.minutes(1))) func aRecordDecadesLaterIsReachedAtOnce() {
        var engine = Self.heardForTwentySeconds()
        let decades = 56 * 365 * 86_400.0
        var events: [Event] = []
        for s in 0...5 {
            events += Self.hear(&engine, at: decades + Double(s))
            events += engine.advance(to: Fixture.at(decades + Double(s) + 0.5))
        }
        #expect(
            events.contains { if case .regionEnter = $0.payload { return true } else { return false } }, "\(events)")
    }
}
