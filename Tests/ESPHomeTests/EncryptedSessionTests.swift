import BeaconCore
import Testing

@testable import ESPHome

/// The encrypted session against an exchange made by the `noise` library and aioesphomeapi's
/// messages (both sides' ephemeral keys fixed, as in `NoiseTests`): every byte the session
/// sends is the one the library's initiator sends, and it reads the responder's.
@Suite struct EncryptedSessionTests {
    static let t0 = Timestamp.seconds(1_764_000_000)
    static let psk = NoiseTests.psk

    enum Exchange {
        static let clientOpening = hex(
            "0100000100310007a37cbc142093c8b755dc1b10e86cb426374ad16aa853ed0bdfc0b2b86d1c7c47db048a759de998655a31eb102b8e2a"
        )
        static let proxyHandshake = hex(
            "01001b0170726f78792d610041413a42423a43433a30303a31313a323200010031005714769d116bf76436ae74bc793d2c30ad1903c5"
                + "9ac5273805c7e2698b410c369e9905d0fa206cd08fafbd1e33c619ad")
        static let clientGreeting = hex(
            "010021959ba1ef14cc762b5540a1b8820b04b8b4d05a1c9724acf3bac239d60db15f696801001465abd9e8759d985233838a9b91d8"
                + "786df317ae1e")
        static let proxyHello = hex(
            "01003f5d27ad149f1638a314c237e309fc6ed117e35bd0eb78c847d7ff99c656125aad8769b188cbaedb766082a0e7db3f70f11162"
                + "db15d2588e47bcd91ab2cc455a")
        static let clientAfterHello = hex(
            "01001474612b0b083ad9b94b738639408a38842459fcb20100163facfca67d0e14c204ab244e0f635db720a4038561b3")
        static let proxyAdverts = hex(
            "010043cf5071f5881bde2334ddba12580fbf661c6d0e1907c3f7d02280d90a07846b1aea98520b7ce142d92f439a5c4561c9e4095785"
                + "c1a584beaf2e10b370c43c5f782081ac")
    }

    @Test func anEncryptedExchangeIsTheLibrarysByteForByte() throws {
        var session = ProxySession(settings: .init(psk: Self.psk), at: Self.t0, ephemeral: Array(1...32))
        #expect(session.opening() == Exchange.clientOpening)
        // Cut anywhere: the proxy's hello and handshake answer arrive in pieces.
        let handshake = Exchange.proxyHandshake
        #expect(session.receive(handshake[0..<10], at: Self.t0).send.isEmpty)
        #expect(session.receive(handshake[10...], at: Self.t0).send == Exchange.clientGreeting)
        #expect(session.identity.name == "proxy-a")
        #expect(session.receive(Exchange.proxyHello, at: Self.t0).send == Exchange.clientAfterHello)
        #expect(session.phase == .listening)
        let out = session.receive(Exchange.proxyAdverts, at: Self.t0)
        #expect(out.advertisements.map(\.rssi) == [-67])
        #expect(out.closed == nil)
    }

    /// Anyone answering on a proxy's address can refuse the handshake with any text (no key
    /// needed): it is kept written out and bounded (issue 61, M1), as every `beaconctl` shows it.
    @Test func aRefusalsTextIsKeptWrittenOutAndBounded() throws {
        var refused = ProxySession(settings: .init(psk: Self.psk), at: Self.t0)
        _ = refused.opening()
        let text = Array("\u{1b}[2J\r[ok] daemon: all good\n".utf8) + [UInt8](repeating: 0x41, count: 400)
        let answer =
            hex("01001b0170726f78792d610041413a42423a43433a30303a31313a323200") + [
                0x01, UInt8((text.count + 1) >> 8), UInt8((text.count + 1) & 0xFF), 0x01,
            ] + text
        let closed = try #require(refused.receive(answer, at: Self.t0).closed)
        #expect(!closed.unicodeScalars.contains { $0.value < 0x20 }, "\(closed)")
        #expect(closed.contains("\\u001b[2J\\r[ok] daemon: all good\\n"), "\(closed)")
        #expect(closed.count < 200, "bounded: \(closed.count)")
    }

    @Test func aWrongKeyOrAPlaintextProxyIsToldWhatToCheck() {
        var refused = ProxySession(settings: .init(psk: Self.psk), at: Self.t0)
        _ = refused.opening()
        let failure = Array("Handshake MAC failure".utf8)
        let answer =
            hex("01001b0170726f78792d610041413a42423a43433a30303a31313a323200") + [
                0x01, 0x00, UInt8(failure.count + 1), 0x01,
            ]
            + failure
        #expect(
            refused.receive(answer, at: Self.t0).closed?.contains("it is not the proxy's api: encryption: key:") == true
        )

        var plain = ProxySession(settings: .init(psk: Self.psk), at: Self.t0)
        _ = plain.opening()
        #expect(
            plain.receive(Wire.helloResponse, at: Self.t0).closed?.contains("the proxy has no API encryption") == true)

        // A frame that does not decrypt once the session is established.
        var damaged = ProxySession(settings: .init(psk: Self.psk), at: Self.t0, ephemeral: Array(1...32))
        _ = damaged.opening()
        _ = damaged.receive(Exchange.proxyHandshake, at: Self.t0)
        var hello = Exchange.proxyHello
        hello[10] ^= 0x40
        #expect(damaged.receive(hello, at: Self.t0).closed?.contains("does not decrypt") == true)
    }
}
