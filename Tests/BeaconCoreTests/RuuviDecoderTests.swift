import Testing

@testable import BeaconCore

/// Ruuvi data format 5 against the test vectors docs.ruuvi.com publishes for it (valid data,
/// maximum, minimum and "not available" values; the minimum's temperature as corrected in
/// ruuvi-sensor-protocols issue 30), and what is not format 5.
@Suite struct RuuviDecoderTests {
    static func frame(_ hex: String) -> Result<BeaconFrame, NonMatchError> {
        BeaconDecoder.decode(
            manufacturerData: [ManufacturerDatum(company: 0x0499, payload: Hex.decode(hex)!)], serviceData: [])
    }

    static func ruuvi(_ hex: String) throws -> RuuviFrame {
        guard case let .success(.ruuvi(f)) = frame(hex) else { throw DecodeFailure(hex: hex) }
        return f
    }

    struct DecodeFailure: Error { var hex: String }

    static func close(_ a: Double?, _ b: Double) -> Bool { a.map { abs($0 - b) < 1e-9 } ?? false }

    @Test func validData() throws {
        let f = try Self.ruuvi("0512FC5394C37C0004FFFC040CAC364200CDCBB8334C884F")
        #expect(Self.close(f.temperatureC, 24.3) && Self.close(f.humidityPercent, 53.49))
        #expect(f.pressurePa == 100_044)
        #expect(f.accelerationX == 4 && f.accelerationY == -4 && f.accelerationZ == 1036)
        #expect(f.batteryMillivolts == 2977 && f.txPower == 4)
        #expect(f.movementCounter == 66 && f.sequence == 205 && f.address == "CB:B8:33:4C:88:4F")
    }

    @Test func maximumValues() throws {
        let f = try Self.ruuvi("057FFFFFFEFFFE7FFF7FFF7FFFFFDEFEFFFECBB8334C884F")
        #expect(Self.close(f.temperatureC, 163.835) && Self.close(f.humidityPercent, 163.835))
        #expect(f.pressurePa == 115_534)
        #expect(f.accelerationX == 32767 && f.accelerationY == 32767 && f.accelerationZ == 32767)
        #expect(f.batteryMillivolts == 3646 && f.txPower == 20)
        #expect(f.movementCounter == 254 && f.sequence == 65534)
    }

    @Test func minimumValues() throws {
        let f = try Self.ruuvi("058001000000008001800180010000000000CBB8334C884F")
        #expect(Self.close(f.temperatureC, -163.835) && Self.close(f.humidityPercent, 0))
        #expect(f.pressurePa == 50_000)
        #expect(f.accelerationX == -32767 && f.accelerationY == -32767 && f.accelerationZ == -32767)
        #expect(f.batteryMillivolts == 1600 && f.txPower == -40)
        #expect(f.movementCounter == 0 && f.sequence == 0)
    }

    @Test func notAvailableValuesAreNil() throws {
        #expect(try Self.ruuvi("058000FFFFFFFF800080008000FFFFFFFFFFFFFFFFFFFFFF") == RuuviFrame())
    }

    @Test func otherFormatsAndLengthsAreCountedNotDecoded() {
        // Data format 3's own published vector, a truncated format 5, an empty payload.
        #expect(Self.frame("03291A1ECE1EFC18F94202CA0B53") == .failure(NonMatchError(.ruuviFormat)))
        #expect(Self.frame("0512FC5394C37C0004FFFC040CAC364200CDCBB8334C88") == .failure(NonMatchError(.ruuviLength)))
        #expect(Self.frame("") == .failure(NonMatchError(.ruuviLength)))
        // A tag that sends format 5 is still no beacon: it has no identity of its own.
        #expect((try? Self.frame("0512FC5394C37C0004FFFC040CAC364200CDCBB8334C884F").get())?.identity == nil)
    }
}
