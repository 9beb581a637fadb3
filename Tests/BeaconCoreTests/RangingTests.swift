import Testing

@testable import BeaconCore

/// SPEC §3 ranging: `ranging` every interval, nearest first; distance and proximity;
/// `beacon.proximity` once a new class holds for 2 intervals.
@Suite struct RangingTests {
    let calibrated: [String: ReceiverCalibration] = ["hci0": ReceiverCalibration(rssiAt1m: -59, pathLossExponent: 2.0)]

    func rangingEngine(receivers: [String: ReceiverCalibration]? = nil) -> Script {
        Script(Fixture.engine([Fixture.region("store", ranging: true)], receivers: receivers ?? calibrated))
    }

    func ranging(_ events: [Event]) -> [[RangedBeacon]] {
        events.compactMap {
            if case let .ranging(_, _, beacons) = $0.payload { return beacons }
            return nil
        }
    }

    @Test func distanceFollowsThePathLossFormula() {
        // rssi_at_1m -59, n 2: -79 dBm is 10 m; n 3: 10^(20/30) m.
        #expect(abs(PathLoss.distance(rssi: -79, rssiAt1m: -59, exponent: 2) - 10) < 1e-9)
        #expect(abs(PathLoss.distance(rssi: -79, rssiAt1m: -59, exponent: 3) - 4.641_588_833_612_779) < 1e-9)
        #expect(abs(PathLoss.distance(rssi: -59, rssiAt1m: -59, exponent: 2) - 1) < 1e-12)
    }

    @Test func proximityClasses() {
        #expect(Proximity(distance: 0.49) == .immediate)
        #expect(Proximity(distance: 0.5) == .near)
        #expect(Proximity(distance: 2.99) == .near)
        #expect(Proximity(distance: 3) == .far)
        #expect(Proximity(distance: nil) == .unknown)
    }

    @Test func rangingEveryIntervalNearestFirst() {
        var s = rangingEngine()
        // Three beacons at 10 m (-79), 1 m (-59) and 2 m (-65), heard every 0.5 s.
        for i in 0..<8 {
            let t = Double(i) * 0.5
            s.see(Fixture.sighting(t, minor: 1, rssi: -79))
            s.see(Fixture.sighting(t + 0.1, minor: 2, rssi: -59))
            s.see(Fixture.sighting(t + 0.2, minor: 3, rssi: -65))
        }
        let lines = s.allLines().filter { $0.contains("ranging") }
        #expect(
            lines == [
                "1 ranging app/store 42/2:near,42/3:near,42/1:far", "2 ranging app/store 42/2:near,42/3:near,42/1:far",
                "3 ranging app/store 42/2:near,42/3:near,42/1:far",
            ])
    }

    @Test func rangedBeaconsCarryDistanceAndReceiver() {
        var s = rangingEngine()
        s.see(from: 0, to: 2.5, every: 0.5, rssi: -79)
        let beacons = ranging(s.take()).last!
        #expect(beacons.count == 1)
        #expect(beacons[0].receiver == "hci0" && beacons[0].rssi == -79)
        #expect(abs(beacons[0].distance! - 10) < 1e-9 && beacons[0].proximity == .far)
    }

    @Test func receiverCalibrationOverridesTheBeaconsMeasuredPower() {
        // The beacon says -59 at 1 m; this receiver is calibrated at -69 at 1 m.
        var s = rangingEngine(receivers: ["hci0": ReceiverCalibration(rssiAt1m: -69, pathLossExponent: 2)])
        s.see(from: 0, to: 1.5, every: 0.5, rssi: -69)
        #expect(abs(ranging(s.take()).last![0].distance! - 1) < 1e-9)
        // Without calibration, the beacon's own measured power is used.
        var u = rangingEngine(receivers: [:])
        u.see(from: 0, to: 1.5, every: 0.5, rssi: -69)
        #expect(abs(ranging(u.take()).last![0].distance! - 10.0.squareRoot()) < 1e-9)
    }

    @Test func theNearestReceiverIsReported() {
        var s = rangingEngine(receivers: [:])
        for i in 0..<4 {
            let t = Double(i) * 0.5
            s.see(Fixture.sighting(t, rssi: -80, receiver: "hci0"))
            s.see(Fixture.sighting(t + 0.01, rssi: -60, receiver: "remote-1"))
        }
        #expect(ranging(s.take()).last![0].receiver == "remote-1")
    }

    @Test func proximityChangeIsReportedAfterItHoldsForTwoIntervals() {
        // One interval of a new class is noise; the second in a row makes it a change.
        var tracker = ProximityTracker()
        let seen: [Proximity] = [.near, .near, .immediate, .near, .immediate, .immediate, .immediate, .far, .unknown]
        let reported = seen.map { tracker.observe($0) }
        #expect(reported == [nil, .near, nil, nil, nil, .immediate, nil, nil, nil])
    }

    @Test func aLastingChangeIsReportedOnce() {
        var s = rangingEngine()
        s.see(from: 0, to: 5, every: 0.25, rssi: -65)
        s.see(from: 5.25, to: 30, every: 0.25, rssi: -85)
        let proximity = s.allLines().filter { $0.contains("beacon.proximity") }
        #expect(proximity.count == 2)
        #expect(proximity.last?.hasSuffix(" far") == true)
    }

    @Test func aBeaconThatGoesSilentBecomesUnknownThenLeavesTheList() {
        var s = rangingEngine()
        s.see(from: 0, to: 3, every: 0.5, rssi: -65)
        s.advance(to: 60)
        let lines = s.allLines()
        // Fresh until 8 s (5 s after the last reading), unknown from 9 s, gone after exit_timeout (33 s)
        #expect(lines.contains("8 ranging app/store 42/7:near"))
        #expect(lines.contains("9 ranging app/store 42/7:unknown"))
        #expect(lines.contains("33 ranging app/store 42/7:unknown"))
        #expect(lines.contains("34 ranging app/store "))
        #expect(!lines.contains("35 ranging app/store "))
        #expect(lines.contains("10 beacon.proximity E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/42/7 unknown"))
    }

    @Test func noRangingEventsForRegionsWithoutRanging() {
        var s = Script(Fixture.engine([Fixture.region("store")]))
        s.see(from: 0, to: 10)
        #expect(s.allLines().filter { $0.contains("ranging") || $0.contains("proximity") } == [])
        #expect(s.engine.nextDeadline != nil)
    }
}
