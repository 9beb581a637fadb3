/// Event ids that are unique and sort in publication order: 26 characters of Crockford
/// base32, like a ULID — 48 bits of milliseconds, 32 bits of per-process nonce, 48 bits of
/// counter.
///
/// The millisecond part never goes backwards (it is the later of the event time and the
/// last id's), so `GET /v1/events?after=<id>` and SSE resumption can compare ids as strings
/// even when a remote receiver delivers a late sighting. The nonce is given by the caller
/// (random in the daemon), which keeps this type free of I/O.
public struct EventIDGenerator: Sendable {
    private var lastMillis: Int64 = 0
    private var counter: UInt64 = 0
    private let nonce: UInt32

    public init(nonce: UInt32) { self.nonce = nonce }

    public mutating func next(for time: Timestamp) -> String {
        let millis = max(lastMillis, time.nanoseconds / 1_000_000)
        lastMillis = millis
        counter &+= 1
        // 128 bits: millis(48) | nonce(32) | counter(48).
        let high = UInt64(truncatingIfNeeded: millis) << 16 | UInt64(nonce >> 16)
        let low = UInt64(nonce & 0xFFFF) << 48 | (counter & 0xFFFF_FFFF_FFFF)
        return EventIDGenerator.base32(high: high, low: low)
    }

    private static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

    /// 128 bits as 26 base32 digits (the first digit holds the top 3 bits).
    private static func base32(high: UInt64, low: UInt64) -> String {
        var out = [UInt8](repeating: 0, count: 26)
        var h = high
        var l = low
        for i in stride(from: 25, through: 0, by: -1) {
            out[i] = alphabet[Int(l & 0x1F)]
            l = (l >> 5) | ((h & 0x1F) << 59)
            h >>= 5
        }
        return String(decoding: out, as: UTF8.self)
    }
}
