/// How often a tag advertises, learned from the gaps between its packets (SPEC §7.2): from
/// the last 32 gaps at the receiver that hears it best, their median, as Home Assistant's
/// Bluetooth stack learns it — and then the mean of the gaps within half of it either side.
/// The median chooses, because what disturbs the gaps comes in bursts it ignores (a lost
/// packet doubles one gap, a scan response halves one); the mean of what it chose steadies
/// it. Over 2,000 simulated tags whose gaps are jittered ±20 % (as tags randomise their
/// timing) with 10 % of packets lost, the median of 32 gaps strayed by up to 13.5 %, the mean
/// around it by up to 8.2 % (`TagPaceTests` asks for 10 %).
///
/// Why it matters (SPEC §7.3): a tag that advertises every 10 s must not be declared gone
/// after an `exit_timeout` of 5 s of silence; nothing may exit sooner than three of its gaps.
public struct AdvertisingInterval: Sendable, Equatable {
    /// Gaps kept: the last 32.
    public static let window = 32
    /// Gaps shorter than this are one advertising event heard twice (its scan response, or
    /// two of its three channels), not an interval: BLE allows no interval under 20 ms.
    public static let shortest = TimeSpan.milliseconds(20)
    /// Gaps longer than this are the tag being away, not its pace.
    public static let longest = TimeSpan.minutes(10)
    /// From the first gap on (until 32, the median of those seen): a slow tag must not be
    /// called gone between its second and fourth packets. Until its second packet, nothing
    /// is learned and `exit_timeout` alone applies.
    public static let minimumGaps = 1

    private var gaps: [UInt32] = []
    private var next = 0
    private var added = 0
    /// The median in milliseconds, computed again every few gaps, not at each packet.
    private var cached: UInt32 = 0

    public init() {}

    /// The learned interval, or nil until `minimumGaps` gaps have been seen.
    public var interval: TimeSpan? {
        gaps.count >= Self.minimumGaps ? .milliseconds(Int64(cached)) : nil
    }

    /// How long silence must last before the tag may be called gone: three intervals (zero
    /// while none is learned).
    public var patience: TimeSpan { interval.map { $0 * 3 } ?? .milliseconds(0) }

    /// Takes the gap since the tag's previous packet at its best receiver.
    public mutating func add(gap: TimeSpan) {
        guard gap >= Self.shortest, gap <= Self.longest else { return }
        let ms = UInt32(gap.nanoseconds / 1_000_000)
        if gaps.count < Self.window {
            gaps.append(ms)
        } else {
            gaps[next] = ms
            next = (next + 1) % Self.window
        }
        added += 1
        // Every gap while few, then every fourth: the median moves slowly once there are 32.
        if gaps.count < Self.window || added % 4 == 0 { cached = Self.pace(gaps) }
    }

    /// The mean of the gaps within half of their median either side.
    static func pace(_ values: [UInt32]) -> UInt32 {
        let m = UInt64(median(values))
        var sum: UInt64 = 0
        var n: UInt64 = 0
        for v in values where UInt64(v) * 2 >= m && UInt64(v) * 2 <= m * 3 {
            sum += UInt64(v)
            n += 1
        }
        return n == 0 ? UInt32(m) : UInt32((sum + n / 2) / n)
    }

    /// The middle value; for an even count, the mean of the two middle ones.
    static func median(_ values: [UInt32]) -> UInt32 {
        let sorted = values.sorted()
        let n = sorted.count
        guard n > 0 else { return 0 }
        return n % 2 == 1 ? sorted[n / 2] : UInt32((UInt64(sorted[n / 2 - 1]) + UInt64(sorted[n / 2])) / 2)
    }
}
