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
        var h: UInt64 = 0
        var l: UInt64 = 0
        for i in 0..<8 { h = h << 8 | UInt64(bytes[offset + i]) }
        for i in 8..<16 { l = l << 8 | UInt64(bytes[offset + i]) }
        self.init(high: h, low: l)
    }

    /// Parses the canonical 8-4-4-4-12 form, either case. Nil for anything else.
    public init?(_ text: String) {
        let utf8 = Array(text.utf8)
        guard utf8.count == 36 else { return nil }
        var h: UInt64 = 0
        var l: UInt64 = 0
        var nibbles = 0
        for (i, c) in utf8.enumerated() {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                guard c == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard let n = Hex.nibble(c) else { return nil }
            if nibbles < 16 { h = h << 4 | UInt64(n) } else { l = l << 4 | UInt64(n) }
            nibbles += 1
        }
        self.init(high: h, low: l)
    }

    /// Upper-case 8-4-4-4-12, as Apple and most beacon tools print proximity UUIDs.
    public var description: String {
        let hex = (pad(String(high, radix: 16, uppercase: true)) + pad(String(low, radix: 16, uppercase: true)))
        let c = Array(hex)
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-" + String(c[16..<20]) + "-"
            + String(c[20..<32])
    }

    private func pad(_ s: String) -> String { String(repeating: "0", count: 16 - s.count) + s }

    public static func < (a: BeaconUUID, b: BeaconUUID) -> Bool { (a.high, a.low) < (b.high, b.low) }
}
