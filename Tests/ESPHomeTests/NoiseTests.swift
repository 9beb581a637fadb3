import Crypto
import Testing

@testable import ESPHome

/// The primitives against their RFCs' vectors, and the handshake against a transcript made by
/// the `noise` library aioesphomeapi uses (noiseprotocol 0.3.1), both sides' ephemeral keys
/// fixed: initiator `01…20`, responder `65…84` (hex), the key below.
@Suite struct NoiseTests {
    static let psk = hex("a71eedb1b2b70bb6e95c7af639ebc457664c83f157353c3698d3a68b81e5ace0")

    @Test func primitivesMatchTheirRFCs() throws {
        #expect(
            NoisePrimitives.sha256(Array("abc".utf8))
                == hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
        // RFC 7748, 6.1
        let alice = hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
        let bob = hex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb")
        #expect(
            NoisePrimitives.x25519Public(alice)
                == hex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"))
        let bobPublic = try #require(NoisePrimitives.x25519Public(bob))
        #expect(
            NoisePrimitives.x25519(alice, bobPublic)
                == hex("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"))
        #expect(NoisePrimitives.x25519(alice, [UInt8](repeating: 0, count: 32)) == nil, "the all-zero point is refused")
        // RFC 8439, 2.8.2
        let key = Array(0x80...0x9F).map { UInt8($0) }
        let nonce = hex("070000004041424344454647")
        let ad = hex("50515253c0c1c2c3c4c5c6c7")
        let plain = Array(
            "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it."
                .utf8)
        let sealed = try #require(NoisePrimitives.seal(key: key, nonce: nonce, ad: ad, plain))
        #expect(Array(sealed.prefix(8)) == hex("d31a8d34648e60db"))
        #expect(Array(sealed.suffix(16)) == hex("1ae10b594f09e26a7e902ecbd0600691"))
        #expect(NoisePrimitives.open(key: key, nonce: nonce, ad: ad, sealed) == plain)
        var forged = sealed
        forged[3] ^= 1
        #expect(NoisePrimitives.open(key: key, nonce: nonce, ad: ad, forged) == nil)
    }

    @Test func theHandshakeIsTheNoiseLibrarys() throws {
        var handshake = try NoiseHandshake(psk: Self.psk, ephemeral: Array(1...32))
        #expect(
            try handshake.firstMessage()
                == hex(
                    "07a37cbc142093c8b755dc1b10e86cb426374ad16aa853ed0bdfc0b2b86d1c7c47db048a759de998655a31eb102b8e2a"))
        var (send, receive) = try handshake.readSecond(
            hex("5714769d116bf76436ae74bc793d2c30ad1903c59ac5273805c7e2698b410c369e9905d0fa206cd08fafbd1e33c619ad"))
        #expect(
            send.encrypt([0, 1, 0, 3] + Array("abc".utf8)) == hex("959ba1e17fa977326f5fcd1510f8624eb2fcae163d962a"))
        #expect(receive.decrypt(hex("5d2dad3fec3d7e15c70d900db4c73fe918f123f0")) == [0, 8, 0, 0])
        #expect(receive.decrypt(hex("cf0a71dac865829cf106dd4e945ef29542a5e409")) == [0, 7, 0, 0])
    }

    @Test func anotherKeysAnswerDoesNotVerify() throws {
        var handshake = try NoiseHandshake(psk: [UInt8](repeating: 7, count: 32), ephemeral: Array(1...32))
        _ = try handshake.firstMessage()
        #expect(throws: NoiseHandshake.Failure.self) {
            _ = try handshake.readSecond(
                hex("5714769d116bf76436ae74bc793d2c30ad1903c59ac5273805c7e2698b410c369e9905d0fa206cd08fafbd1e33c619ad"))
        }
    }
}
