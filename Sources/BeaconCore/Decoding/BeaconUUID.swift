/// A 128-bit proximity UUID held as two integers, so hashing and comparing it on every
/// sighting costs two word operations instead of a string.
public struct BeaconUUID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var high: UInt64
    public var low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Reads 16 big-endian bytes at `offset`; the caller has checked the length.
    init(bytes: [UInt8], at offset: Int) {
        self = bytes.withUnsafeBytes { BeaconUUID(bytes: $0, at: offset) }
    }

    /// The same, from an advertisement's bytes where they lie.
    init(bytes: UnsafeRawBufferPointer, at offset: Int) {
        var h: UInt64 = 0
        var l: UInt64 = 0
        for i in 0..<8 { h = h << 8 | UInt64(bytes[offset + i]) }
        for i in 8..<16 { l = l << 8 | UInt64(bytes[offset + i]) }
        self.init(high: h, low: l)
    }

    /// Parses the canonical 8-4-4-4-12 form, either case. Nil for anything else.
    public init?(_ text: String) {
        var text = text
        guard let uuid = text.withUTF8({ BeaconUUID(text: UnsafeRawBufferPointer($0)) }) else { return nil }
        self = uuid
    }

    /// The same, from the text's bytes (a service data key where it lies in a record).
    init?(text: UnsafeRawBufferPointer) {
        guard text.count == 36 else { return nil }
        var h: UInt64 = 0
        var l: UInt64 = 0
        var nibbles = 0
        for i in 0..<36 {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                guard text[i] == UInt8(ascii: "-") else { return nil }
                continue
            }
            let n = Hex.digit(text[i])
            guard n < 16 else { return nil }
            if nibbles < 16 { h = h << 4 | UInt64(n) } else { l = l << 4 | UInt64(n) }
            nibbles += 1
        }
        self.init(high: h, low: l)
    }

    /// Upper-case 8-4-4-4-12, as Apple and most beacon tools print proximity UUIDs.
    /// Written digit by digit into 36 bytes: events carry one per beacon, ranging twenty.
    public var description: String {
        String(unsafeUninitializedCapacity: 36) { out in
            let digits: StaticString = "0123456789ABCDEF"
            var at = 0
            for nibble in 0..<32 {
                if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 {
                    out[at] = UInt8(ascii: "-")
                    at += 1
                }
                let word = nibble < 16 ? high : low
                out[at] = digits.utf8Start[Int((word >> (60 - 4 * UInt64(nibble % 16))) & 0xF)]
                at += 1
            }
            return at
        }
    }

    public static func < (a: BeaconUUID, b: BeaconUUID) -> Bool { (a.high, a.low) < (b.high, b.low) }
}
