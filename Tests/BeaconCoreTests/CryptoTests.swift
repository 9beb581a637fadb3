import BeaconCore
import Crypto
import Testing

/// The primitives from libcrypto against their published answers: FIPS 197's AES-128
/// example, the Bluetooth Core specification's `ah` sample data, RFC 4231's HMAC-SHA256 cases.
@Suite struct CryptoTests {
    @Test func aes128MatchesFIPS197() throws {
        let cipher = try #require(AES128(key: Hex.decode("000102030405060708090a0b0c0d0e0f")!))
        let out = cipher.encrypt(AES128.Block(Hex.decode("00112233445566778899aabbccddeeff")!))
        #expect(out.map { Hex.encode($0.array) } == "69c4e0d86a7b0430d8cdb78070b4c55a")
        #expect(AES128(key: [1, 2, 3]) == nil)
    }

    /// Core specification v5.4, Vol 3, Part H, Appendix D.7 (`ah` random address hash):
    /// IRK ec0234a3 57c8ad05 341010a6 0a397d9b, prand 708194 → hash 0dfbaa.
    @Test func ahMatchesTheSpecificationsSampleData() throws {
        let key = try #require(IdentityResolvingKey(hex: "ec0234a357c8ad05341010a60a397d9b"))
        let cipher = try #require(AES128(key: key.bytes))
        #expect(IdentityResolvingKey.hash(cipher, prand: 0x70_8194) == 0x0D_FBAA)
        // The address a device with this key sends for that prand, and the resolver's answer.
        #expect(key.address(prand: 0x70_8194) == "70:81:94:0D:FB:AA")
        var resolver = AddressResolver(keys: [(asset: 3, key: key)])
        #expect(resolver.asset(address: "70:81:94:0D:FB:AA", type: "random") == 3)
        #expect(resolver.asset(address: "708194 0dfbaa".replacingSpace(), type: nil) == 3)
        // One bit of the hash wrong, a public address, a static random one: no.
        #expect(resolver.asset(address: "70:81:94:0D:FB:AB", type: "random") == nil)
        #expect(resolver.asset(address: "70:81:94:0D:FB:AA", type: "public") == nil)
        #expect(resolver.asset(address: "F0:81:94:0D:FB:AA", type: "random") == nil)
        #expect(IdentityResolvingKey(hex: "0xec0234a357c8ad05341010a60a397d9b") == key)
        #expect(IdentityResolvingKey(hex: "ec0234a357c8ad05341010a60a397d9") == nil)
    }

    /// Each new address costs one AES per key, once: the answer (yes or no) is remembered.
    @Test func theResolverTriesEachAddressOnce() throws {
        let keys = (0..<50).map { i in IdentityResolvingKey(bytes: (0..<16).map { UInt8(($0 * 7 + i) & 0xFF) })! }
        var resolver = AddressResolver(keys: keys.enumerated().map { (asset: $0, key: $1) })
        let phone = try #require(keys[42].address(prand: 0x12_3456))
        for _ in 0..<5 { #expect(resolver.asset(address: phone, type: "random") == 42) }
        for _ in 0..<5 { #expect(resolver.asset(address: "4A:AA:AA:00:00:01", type: "random") == nil) }
        #expect(resolver.tried == 2)
        #expect(resolver.resolved == 1)
        // Another address of the same phone is the same asset.
        let next = try #require(keys[42].address(prand: 0x3F_0001))
        #expect(next != phone)
        #expect(resolver.asset(address: next, type: nil) == 42)
    }

    /// A batch resolved together (as the daemon does) gives the answers one by one would,
    /// trying each new address once.
    @Test func aBatchResolvedTogetherAgreesWithOneByOne() throws {
        let keys = (0..<300).map { i in IdentityResolvingKey(bytes: (0..<16).map { UInt8(($0 * 13 + i * 3) & 0xFF) })! }
        let pairs = keys.enumerated().map { (asset: $0 * 2, key: $1) }
        var batched = AddressResolver(keys: pairs)
        var single = AddressResolver(keys: pairs)
        var addresses = (0..<40).map { keys[$0 * 7].address(prand: UInt32($0 * 1000))! }
        addresses += (0..<200).map { BluetoothAddress(value: 0x4000_0000_0000 | UInt64($0) * 7919).text }
        addresses += ["C3:11:22:33:44:55", "not an address", addresses[3]]
        let sightings = addresses.map {
            Sighting(time: .seconds(1), receiver: "hci0", address: $0, addressType: "random", rssi: -60)
        }
        batched.prepare(sightings)
        #expect(batched.tried == 240, "each candidate once: the repeat, a static and a bad address are not")
        for a in addresses {
            #expect(batched.asset(address: a, type: "random") == single.asset(address: a, type: "random"), "\(a)")
        }
        #expect(batched.tried == 240 && batched.resolved == 40)
        #expect(batched.asset(address: addresses[5], type: "random") == 70)
    }

    @Test func hmacSHA256MatchesRFC4231() {
        func hex(key: [UInt8], message: [UInt8]) -> String? {
            HMACSHA256.mac(key: key, message: message).map(HMACSHA256.hex)
        }
        #expect(
            hex(key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(
            hex(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        // A key longer than the block is hashed first.
        #expect(
            hex(
                key: [UInt8](repeating: 0xaa, count: 131),
                message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        // An empty message (a webhook test with no body) still has a MAC.
        #expect(
            hex(key: Array("key".utf8), message: [])
                == "5d5d139563c95b5967b9bd9a8c9b233a9dedb45072794cd232dc1b74832607d0")
    }
}

extension String {
    fileprivate func replacingSpace() -> String { String(filter { $0 != " " }) }
}
