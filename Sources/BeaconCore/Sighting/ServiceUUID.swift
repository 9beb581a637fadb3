/// A service data key as advertisements carry it: a 16-bit UUID of the Bluetooth base, or a
/// whole 128-bit one.
///
/// Why: BlueZ writes every key as 36 characters (`0000feaa-0000-1000-8000-00805f9b34fb`),
/// firmware as `feaa` or `0xfeaa`, records as either in any case. Read once into a number,
/// the decoder compares two bytes instead of lower-casing a string per sighting, and all the
/// spellings of one UUID are one key.
public enum ServiceUUID: Equatable, Sendable {
    case short(UInt16)
    case long(BeaconUUID)

    /// The low 96 bits of the Bluetooth base UUID, `-0000-1000-8000-00805f9b34fb`.
    static let baseHighLow: UInt64 = 0x0000_1000
    static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB

    /// `feaa`, `0xFEAA`, or 8-4-4-4-12 in either case; nil for any other text.
    public init?(_ text: String) {
        var text = text
        guard let parsed = text.withUTF8({ ServiceUUID(UnsafeRawBufferPointer($0)) }) else { return nil }
        self = parsed
    }

    /// The same, from the text's bytes.
    public init?(_ text: UnsafeRawBufferPointer) {
        switch text.count {
        case 4, 6:
            var at = 0
            if text.count == 6 {
                guard text[0] == UInt8(ascii: "0"), text[1] | 0x20 == UInt8(ascii: "x") else { return nil }
                at = 2
            }
            var value: UInt16 = 0
            while at < text.count {
                let n = Hex.digit(text[at])
                guard n < 16 else { return nil }
                value = value << 4 | UInt16(n)
                at += 1
            }
            self = .short(value)
        case 36:
            guard let uuid = BeaconUUID(text: text) else { return nil }
            self.init(uuid)
        default:
            return nil
        }
    }

    /// A whole UUID: its 16 bits when it is one of the Bluetooth base.
    public init(_ uuid: BeaconUUID) {
        if uuid.high & 0xFFFF_0000_FFFF_FFFF == Self.baseHighLow, uuid.low == Self.baseLow {
            self = .short(UInt16(truncatingIfNeeded: uuid.high >> 32))
        } else {
            self = .long(uuid)
        }
    }

    /// A 32-bit UUID of the Bluetooth base (an advertisement's AD type 0x20).
    public init(uuid32 value: UInt32) {
        self.init(BeaconUUID(high: UInt64(value) << 32 | Self.baseHighLow, low: Self.baseLow))
    }

    /// The 128-bit form in lower case, as BlueZ writes it.
    public var text: String {
        switch self {
        case let .short(v):
            return .init(
                BeaconUUID(high: UInt64(v) << 32 | Self.baseHighLow, low: Self.baseLow).description.lowercased())
        case let .long(uuid): return uuid.description.lowercased()
        }
    }
}
