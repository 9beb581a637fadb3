import BeaconCore
import Testing

@testable import ESPHome

/// The session against the bytes ESPHome's own client library makes (`Wire`).
@Suite struct ProxySessionTests {
    static let t0 = Timestamp.seconds(1_764_000_000)

    static func listening() -> ProxySession {
        var session = ProxySession(settings: .init(), at: t0)
        _ = session.receive(Wire.helloResponse, at: t0)
        return session
    }

    @Test func theOpeningIsWhatHomeAssistantsClientSends() {
        var session = ProxySession(settings: .init(), at: Self.t0)
        #expect(session.opening() == Wire.opening)
    }

    @Test func aHelloAnsweredAsksDeviceInfoAndSubscribesToRawAdvertisements() {
        var session = ProxySession(settings: .init(), at: Self.t0)
        let out = session.receive(Wire.helloResponse, at: Self.t0 + .seconds(1))
        #expect(out.send == Wire.afterHello)
        #expect(session.phase == .listening)
        #expect(session.identity.name == "proxy-a" && session.identity.apiVersion == "1.12")
        _ = session.receive(Wire.deviceInfo, at: Self.t0 + .seconds(1))
        #expect(session.identity.model == "esp32-c3-devkitm-1" && session.identity.esphomeVersion == "2025.11.0")
        #expect(session.identity.friendlyName == "Aisle 3 proxy" && session.identity.serverInfo.hasPrefix("proxy-a"))
        #expect(session.identity.bluetoothMACAddress == "AA:BB:CC:00:11:24")
    }

    @Test func advertisementsBecomeSightingsOfTheProxysReceiver() throws {
        var session = Self.listening()
        // Cut at every byte: a connection delivers what it has.
        var got: [RawAdvertisement] = []
        for byte in Wire.advertisements { got += session.receive([byte], at: Self.t0).advertisements }
        #expect(got.count == 2)
        let receiver = try #require(ReceiverID("esphome-aisle-3"))
        let first = try got[0].sighting(receiver: receiver, at: Self.t0)
        #expect(first.address == "C3:11:22:33:44:55" && first.addressKind == .random && first.rssi == -67)
        #expect(first.receiver == "esphome-aisle-3")
        guard case let .success(.iBeacon(beacon)) = BeaconDecoder.decode(first.data) else {
            Issue.record("not an iBeacon")
            return
        }
        #expect(beacon.id.major == 42 && beacon.id.minor == 7 && beacon.measuredPower == -59)
        let second = try got[1].sighting(receiver: receiver, at: Self.t0)
        #expect(second.address == "00:1A:7D:DA:71:13" && second.addressKind == .public && second.rssi == -80)
        #expect(second.name == "Tag1")
        #expect(second.data.serviceData.first?.payload.first == 0x10)
    }

    @Test func aQuietProxyIsPingedThenGivenUp() {
        var session = Self.listening()
        #expect(session.tick(at: Self.t0 + .seconds(19)).send.isEmpty)
        #expect(session.tick(at: Self.t0 + .seconds(20)).send == PlaintextFrames.encode(.pingRequest))
        #expect(session.tick(at: Self.t0 + .seconds(21)).send.isEmpty, "one ping, not one a tick")
        // Answered: quiet again from then.
        _ = session.receive(Wire.pingResponse, at: Self.t0 + .seconds(22))
        #expect(session.tick(at: Self.t0 + .seconds(42)).send == PlaintextFrames.encode(.pingRequest))
        #expect(session.tick(at: Self.t0 + .seconds(111)).closed == nil)
        let out = session.tick(at: Self.t0 + .seconds(112))
        #expect(out.closed?.contains("no answer for 90") == true)
        #expect(session.phase == .closed)
    }

    @Test func aPingIsAnsweredAndADisconnectTold() {
        var session = Self.listening()
        #expect(session.receive(Wire.ping, at: Self.t0).send == Wire.pingResponse)
        let out = session.receive(hex("000005"), at: Self.t0)
        #expect(out.send == hex("000006"))
        #expect(out.closed?.contains("the proxy closed the connection") == true)
    }

    @Test func whatIsNotAProxyEndsTheSessionSayingWhy() {
        var encrypted = ProxySession(settings: .init(), at: Self.t0)
        #expect(encrypted.receive(hex("0100"), at: Self.t0).closed?.contains("encryption_key_file") == true)
        var large = ProxySession(settings: .init(), at: Self.t0)
        #expect(large.receive(hex("0080800402"), at: Self.t0).closed?.contains("larger than any ESPHome sends") == true)
        var silent = ProxySession(settings: .init(), at: Self.t0)
        #expect(silent.tick(at: Self.t0 + .seconds(14)).closed == nil)
        #expect(silent.tick(at: Self.t0 + .seconds(15)).closed?.contains("no answer to Hello") == true)
        var refused = ProxySession(settings: .init(password: "nope"), at: Self.t0)
        #expect(refused.receive(hex("0002040801"), at: Self.t0).closed == "the proxy refused the password")
        // An advertisement whose AD length runs past its data is no sighting.
        let bad = RawAdvertisement(address: 1, rssi: -50, addressType: 0, data: [0x05, 0xFF, 0x4C])
        #expect(throws: ADStructures.Problem.overrun(at: 0)) { try bad.sighting(receiver: .unlisted, at: Self.t0) }
    }
}
