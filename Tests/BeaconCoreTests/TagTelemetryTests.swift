import BeaconConfig
import Testing

@testable import BeaconCore

/// SPEC §7.1–7.2: telemetry frames joined to assets, through the engine as sightings arrive.
@Suite struct TagTelemetryTests {
    static let t0 = Timestamp.seconds(1_763_805_600)

    static func engine() throws -> BeaconEngine {
        let config = try ConfigLoader.load(
            yaml: """
                gateway: {id: gw}
                receivers:
                  - {id: hci0, position: {x: 0, y: 0}}
                assets:
                  - {id: pallet-9, beacon: {namespace: 00112233445566778899, instance: aabbccddeeff}}
                  - {id: fridge-2, beacon: {address: "CB:B8:33:4C:88:4F"}}
                  - {id: cart-7, beacon: {uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 1, minor: 7}}

                """, file: "beacond.yaml")
        return BeaconEngine(configuration: config.engineConfiguration, start: t0)
    }

    static func sighting(_ seconds: Int, address: String, service: [UInt8]? = nil, ruuvi: String? = nil) -> Sighting {
        Sighting(
            time: t0 + .seconds(Int64(seconds)), receiver: "hci0", address: address, rssi: -65,
            manufacturerData: ruuvi.map { [ManufacturerDatum(company: 0x0499, payload: Hex.decode($0)!)] } ?? [],
            serviceData: service.map { [ServiceDatum(uuid: DecoderTests.eddystone, payload: $0)] } ?? [])
    }

    /// Eddystone-UID of pallet-9.
    static let uid: [UInt8] =
        [0x00, 0xEE] + Hex.decode("00112233445566778899")! + Hex.decode("aabbccddeeff")! + [0, 0]
    /// Eddystone-TLM: 2,950 mV, 21.5 °C, 1,000 advertisements, 100 s up.
    static let tlm: [UInt8] = [0x20, 0x00, 0x0B, 0x86, 0x15, 0x80, 0, 0, 0x03, 0xE8, 0, 0, 0x03, 0xE8]

    @Test func anEddystoneTagsTLMIsJoinedToItsAssetByTheAddressItsUIDCameFrom() throws {
        var engine = try Self.engine()
        // A TLM before the tag's UID was heard from that address is no one's yet.
        _ = engine.ingest(Self.sighting(0, address: "E1:02:03:04:05:06", service: Self.tlm))
        #expect(engine.tracker?.telemetry(asset: "pallet-9")?.batteryMillivolts == nil)
        _ = engine.ingest(Self.sighting(1, address: "E1:02:03:04:05:06", service: Self.uid))
        _ = engine.ingest(Self.sighting(2, address: "E1:02:03:04:05:06", service: Self.tlm))
        let telemetry = try #require(engine.tracker?.telemetry(asset: "pallet-9"))
        #expect(telemetry.batteryMillivolts == 2950 && telemetry.temperatureC == 21.5)
        #expect(telemetry.batteryAt == Self.t0 + .seconds(2) && telemetry.moving(at: Self.t0) == nil)
        #expect(engine.counters.telemetryFrames == 1 && engine.counters.framesWithoutIdentity == 2)
        // Another tag's TLM, from an address no asset's frames came from, changes nothing.
        _ = engine.ingest(Self.sighting(3, address: "E9:09:09:09:09:09", service: Self.tlm))
        #expect(engine.tracker?.telemetry(asset: "pallet-9") == telemetry && engine.counters.telemetryFrames == 1)
    }

    @Test func aRuuviTagKnownByAddressReportsBatteryTemperatureAndMovement() throws {
        var engine = try Self.engine()
        let address = "CB:B8:33:4C:88:4F"
        // Ruuvi's valid vector (2,977 mV, 24.3 °C, movement counter 66), then 67 at 30 s.
        let frame = "0512FC5394C37C0004FFFC040CAC364200CDCBB8334C884F"
        _ = engine.ingest(Self.sighting(0, address: address, ruuvi: frame))
        var telemetry = try #require(engine.tracker?.telemetry(asset: "fridge-2"))
        #expect(telemetry.batteryMillivolts == 2977 && abs((telemetry.temperatureC ?? 0) - 24.3) < 1e-9)
        #expect(telemetry.moving(at: Self.t0 + .seconds(1)) == false, "one counter reading says nothing of moving")
        _ = engine.ingest(
            Self.sighting(
                30, address: address, ruuvi: "051300" + frame.dropFirst(6).prefix(24) + "43" + frame.suffix(16)))
        telemetry = try #require(engine.tracker?.telemetry(asset: "fridge-2"))
        #expect(telemetry.movementCounter == 67 && abs((telemetry.temperatureC ?? 0) - 24.32) < 1e-9)
        #expect(telemetry.moving(at: Self.t0 + .seconds(60)) == true)
        #expect(telemetry.moving(at: Self.t0 + .seconds(91)) == false, "still for a minute")
    }
}
