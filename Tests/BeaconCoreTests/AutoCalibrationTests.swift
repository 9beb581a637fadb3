import BeaconCore
import Foundation
import Testing

/// Receivers fitted to each other's calibration advertisements: the identity each receiver
/// advertises as maps back to it, pairs are tallied per (hearer, advertiser) at the distance
/// the site gives, and the fit recovers each hearer's radio.
struct AutoCalibrationTests {
    static let receivers = [
        SiteReceiver(id: "a", position: Point(x: 0, y: 0), level: 0, z: 3),
        SiteReceiver(id: "b", position: Point(x: 3, y: 4), level: 0, z: 3),
        SiteReceiver(id: "c", position: Point(x: 12, y: 0), level: 0),
        SiteReceiver(id: "upstairs", position: Point(x: 0, y: 0), level: 1),
    ]

    static func t(_ s: Int64) -> Timestamp { .seconds(1_800_000_000 + s) }

    func make() -> AutoCalibration {
        AutoCalibration(receivers: Self.receivers, uuid: AutoCalibration.defaultUUID, start: Self.t(0))!
    }

    func hear(_ c: inout AutoCalibration, _ hearer: String, _ advertiser: String, _ rssi: [Int]) {
        let id = AutoCalibration.identity(of: advertiser)
        for (i, r) in rssi.enumerated() {
            c.observe(hearer: hearer, major: id.major, minor: id.minor, rssi: r, at: Self.t(Int64(i)))
        }
    }

    @Test func pairsAreTalliedAtTheSitesDistances() {
        var c = make()
        hear(&c, "a", "b", [-60, -62, -61, -59, -63])
        hear(&c, "a", "c", [-75, -75])
        // Across levels, from itself, by a receiver the file does not have: no known distance.
        hear(&c, "upstairs", "a", [-50])
        hear(&c, "a", "a", [-40])
        hear(&c, "relay-9", "a", [-70])
        let pairs = c.pairs
        #expect(pairs.map { "\($0.hearer)<\($0.advertiser)" } == ["a<b", "a<c"])
        #expect(pairs[0].distance == 5 && pairs[0].samples == 5 && pairs[0].meanRSSI == -61)
        #expect(abs(pairs[0].standardDeviation - 2.0.squareRoot()) < 1e-9)
        // c has no mounting height: the distance is the floor's.
        #expect(pairs[1].distance == 12 && pairs[1].lastHeard == Self.t(1))
        // Only pairs heard at least 5 times are fitted: a<c's two packets are left out.
        #expect(c.fit().map(\.samples) == [1])
    }

    @Test func theFitRecoversEachHearersRadioAndTheTagOffsetCarriesItOver() {
        var c = make()
        // a's radio: −48 dBm at 1 m, exponent 2.8, heard from b (5 m) and c (12 m).
        let model = { (d: Double) in Int((-48 - 28 * log10(d)).rounded()) }
        hear(&c, "a", "b", Array(repeating: model(5), count: 8))
        hear(&c, "a", "c", Array(repeating: model(12), count: 8))
        let fit = c.fit(previous: ["a": ReceiverCalibration(rssiAt1m: -59, pathLossExponent: 2)])
        #expect(fit.count == 1 && fit[0].exponentFitted)
        // Within what whole-dB readings at two distances allow (−67.6 is heard as −68).
        #expect(abs(fit[0].rssiAt1m - -48) < 2 && abs(fit[0].pathLossExponent - 2.8) < 0.2, "\(fit[0])")
        #expect(fit[0].rmsAfter < 0.5 && fit[0].rmsBefore > 3, "\(fit[0])")
        // Tags 6 dB weaker than the gateways' advertisements: their 1 m power is 6 dB lower.
        let tags = c.fit(tagOffset: 6)
        #expect(abs(tags[0].rssiAt1m - (fit[0].rssiAt1m - 6)) < 1e-9)
        #expect(tags[0].pathLossExponent == fit[0].pathLossExponent)
    }

    @Test func identitiesAreStableAndStrangersAreCounted() {
        // FNV-1a of "a" is 0xE40C292C.
        #expect(AutoCalibration.identity(of: "a") == (0xE40C, 0x292C))
        #expect(AutoCalibration.collisions(["a", "b", "c", "rx-1", "rx-2"]).isEmpty)
        var c = make()
        c.observe(hearer: "a", major: 1, minor: 2, rssi: -60, at: Self.t(1))
        #expect(c.unknownAdvertisers == 1 && c.pairs.isEmpty)
        hear(&c, "a", "b", [-60])
        c.reset(at: Self.t(9))
        #expect(c.pairs.isEmpty && c.unknownAdvertisers == 0 && c.since == Self.t(9))
        // Nothing to calibrate with one receiver.
        #expect(
            AutoCalibration(receivers: [Self.receivers[0]], uuid: AutoCalibration.defaultUUID, start: Self.t(0)) == nil)
    }

    @Test func theEngineTalliesCalibrationBeaconsItDecodes() {
        var site = SiteConfiguration(receivers: Array(Self.receivers.prefix(3)))
        site.calibrationUUID = AutoCalibration.defaultUUID
        var engine = BeaconEngine(configuration: EngineConfiguration(site: site), start: Self.t(0))
        let id = AutoCalibration.identity(of: "b")
        let payload: [UInt8] =
            [
                0x02, 0x15, 0xB3, 0xAC, 0x0C, 0xA1, 0x1B, 0x8A, 0x4E, 0x5D, 0x9C, 0x1E, 0x0C, 0xA1, 0x1B, 0x8A, 0x7E,
                0x00,
            ]
            + [UInt8(id.major >> 8), UInt8(id.major & 0xFF), UInt8(id.minor >> 8), UInt8(id.minor & 0xFF), 0xC5]
        for i in 0..<3 {
            _ = engine.ingest(
                Sighting(
                    time: Self.t(Int64(i)), receiver: "a", address: "AA:BB:CC:00:00:01", rssi: -64,
                    manufacturerData: [ManufacturerDatum(company: 0x004C, payload: payload)]))
        }
        #expect(engine.calibration?.pairs.map(\.samples) == [3])
        #expect(engine.resetCalibration() && engine.calibration?.pairs.isEmpty == true)
        // A reload that moves a receiver starts the tallies again; one that keeps them, not.
        _ = engine.ingest(
            Sighting(
                time: Self.t(5), receiver: "a", address: "AA:BB:CC:00:00:01", rssi: -64,
                manufacturerData: [ManufacturerDatum(company: 0x004C, payload: payload)]))
        _ = engine.reconfigureSite(site, calibrations: [:], at: Self.t(6))
        #expect(engine.calibration?.pairs.count == 1)
        site.receivers[1].position.x = 6
        _ = engine.reconfigureSite(site, calibrations: [:], at: Self.t(7))
        #expect(engine.calibration?.pairs.isEmpty == true)
    }
}
