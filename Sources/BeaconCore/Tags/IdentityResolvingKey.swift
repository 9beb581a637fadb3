import Crypto

/// A device's identity resolving key (IRK): what turns the address a phone or a watch
/// changes every few minutes back into one device (Bluetooth Core specification, Vol 3,
/// Part H, 2.2.2 and Vol 6, Part B, 1.3.2.2).
///
/// Written as the specification, ESPresense, Home Assistant and Theengs write it: 32 hex
/// digits, most significant byte first. (BlueZ's store holds it the other way round:
/// `beaconctl enroll` turns it.)
public struct IdentityResolvingKey: Sendable, Equatable, Hashable {
    public let bytes: [UInt8]

    /// Nil unless `hex` is 32 hex digits (an `0x` before them allowed).
    public init?(hex: String) {
        let digits = hex.hasPrefix("0x") ? String(hex.dropFirst(2)) : hex
        guard digits.utf8.count == 32, let bytes = Hex.decode(digits) else { return nil }
        self.bytes = bytes
    }

    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    public var hex: String { Hex.encode(bytes) }

    /// The specification's `ah(k, r)`: the low 24 bits of AES-128 under this key of `prand`
    /// padded with zeros to 128 bits. Nil only if libcrypto fails.
    public static func hash(_ cipher: AES128, prand: UInt32) -> UInt32? {
        var block = AES128.Block()
        block[13] = UInt8(truncatingIfNeeded: prand >> 16)
        block[14] = UInt8(truncatingIfNeeded: prand >> 8)
        block[15] = UInt8(truncatingIfNeeded: prand)
        guard let out = cipher.encrypt(block) else { return nil }
        return UInt32(out[13]) << 16 | UInt32(out[14]) << 8 | UInt32(out[15])
    }

    /// A resolvable private address of this key: `prand`'s top two bits made 01, its hash
    /// below it, as `AA:BB:CC:DD:EE:FF`. What a phone with this key sends (the simulator's
    /// phones, the tests).
    public func address(prand: UInt32) -> String? {
        guard let cipher = AES128(key: bytes) else { return nil }
        let p = (prand & 0x3F_FFFF) | 0x40_0000
        guard let h = Self.hash(cipher, prand: p) else { return nil }
        let value = UInt64(p) << 24 | UInt64(h)
        return BluetoothAddress(value: value).text
    }
}

/// A 48-bit Bluetooth address read from its text, most significant byte first.
public struct BluetoothAddress: Sendable, Equatable, Hashable {
    public let value: UInt64

    public init(value: UInt64) { self.value = value & 0xFFFF_FFFF_FFFF }

    /// `AA:BB:CC:DD:EE:FF` (either case), or the twelve digits without colons; nil otherwise.
    public init?(_ text: String) {
        var v: UInt64 = 0
        var digits = 0
        var colons = 0
        for c in text.utf8 {
            if c == UInt8(ascii: ":") {
                guard digits % 2 == 0, digits > 0 else { return nil }
                colons += 1
                continue
            }
            guard let n = Hex.nibble(c), digits < 12 else { return nil }
            v = v << 4 | UInt64(n)
            digits += 1
        }
        guard digits == 12, colons == 0 || colons == 5 else { return nil }
        value = v
    }

    /// `AA:BB:CC:DD:EE:FF`.
    public var text: String {
        String(unsafeUninitializedCapacity: 17) { out in
            write(into: UnsafeMutableRawBufferPointer(out))
            return 17
        }
    }

    /// `AA:BB:CC:DD:EE:FF` into 17 bytes of `out` (a record being written, no string between),
    /// with `separator` between the bytes (a D-Bus object path has `_`).
    public func write(into out: UnsafeMutableRawBufferPointer, separator: UInt8 = UInt8(ascii: ":")) {
        let digits: StaticString = "0123456789ABCDEF"
        for byte in 0..<6 {
            let b = Int(value >> UInt64(40 - 8 * byte) & 0xFF)
            out[3 * byte] = digits.utf8Start[b >> 4]
            out[3 * byte + 1] = digits.utf8Start[b & 0xF]
            if byte < 5 { out[3 * byte + 2] = separator }
        }
    }

    /// The two top bits are 01: a resolvable private address (when its type is random).
    public var isResolvable: Bool { value >> 46 == 0b01 }
    /// The top 24 bits, `prand`, and the low 24, its hash.
    public var prand: UInt32 { UInt32(value >> 24) }
    public var hash: UInt32 { UInt32(value & 0xFF_FFFF) }
}
