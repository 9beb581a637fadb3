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
public struct AdvertisingInterval: Sendable {
    /// Gaps kept: the last 32.
    public static let window = 32
    /// Gaps shorter than this are one advertising event heard twice (its scan response, or
    /// two of its three channels), not an interval: BLE allows no interval under 20 ms.
    public static let shortest = TimeSpan.milliseconds(20)
    /// Gaps longer than this are the tag being away, not its pace (and a gap fits 16 bits
    /// of milliseconds: a tenth of what a store's 20,000 beacons would hold otherwise).
    public static let longest = TimeSpan.seconds(60)
    /// From the first gap on (until 32, the median of those seen): a slow tag must not be
    /// called gone between its second and fourth packets. Until its second packet, nothing
    /// is learned: a region's `exit_timeout` alone applies (its enter waits for more than one
    /// packet anyway), and an asset waits `longest` (`AssetTracker.lostAfter`).
    public static let minimumGaps = 1

    /// Inline, not an array: no allocation per beacon, and 64 bytes where an array of 32 took
    /// 64 and a heap block besides.
    private var gaps = InlineArray<32, UInt16>(repeating: 0)
    private var count: UInt8 = 0
    private var next: UInt8 = 0
    private var added: UInt32 = 0
    /// The pace in milliseconds, computed again every few gaps, not at each packet.
    private var cached: UInt16 = 0

    public init() {}

    /// The learned interval, or nil until `minimumGaps` gaps have been seen.
    public var interval: TimeSpan? {
        Int(count) >= Self.minimumGaps ? .milliseconds(Int64(cached)) : nil
    }

    /// How long silence must last before the tag may be called gone: three intervals (zero
    /// while none is learned). Stored, since every sighting of the beacon reads it.
    public private(set) var patience = TimeSpan.milliseconds(0)

    /// Takes the gap since the tag's previous packet at its best receiver.
    public mutating func add(gap: TimeSpan) {
        guard gap >= Self.shortest, gap <= Self.longest else { return }
        let ms = UInt16(gap.nanoseconds / 1_000_000)
        gaps[Int(next)] = ms
        next = (next + 1) % UInt8(Self.window)
        if Int(count) < Self.window { count += 1 }
        added &+= 1
        // Each of the first four gaps, then every sixteenth: the pace moves slowly after that
        // (measured: every eighth cost the engine 9 % of its throughput, BENCHMARKS.md).
        if added <= 4 || added % 16 == 0 {
            cached = Self.pace(gaps, count: Int(count))
            patience = .milliseconds(3 * Int64(cached))
        }
    }

    /// The mean of the gaps within half of their median either side. Sorted in a buffer on
    /// the stack: this runs every eighth packet of every beacon, and must not allocate.
    static func pace(_ values: InlineArray<32, UInt16>, count n: Int) -> UInt16 {
        withUnsafeTemporaryAllocation(of: UInt16.self, capacity: max(1, n)) { buffer in
            for i in 0..<n { buffer.initializeElement(at: i, to: values[i]) }
            // Insertion sort: at most 32 values.
            for i in 1..<max(1, n) {
                let v = buffer[i]
                var j = i
                while j > 0, buffer[j - 1] > v {
                    buffer[j] = buffer[j - 1]
                    j -= 1
                }
                buffer[j] = v
            }
            guard n > 0 else { return 0 }
            let m = n % 2 == 1 ? UInt64(buffer[n / 2]) : (UInt64(buffer[n / 2 - 1]) + UInt64(buffer[n / 2])) / 2
            var sum: UInt64 = 0
            var kept: UInt64 = 0
            for i in 0..<n where UInt64(buffer[i]) * 2 >= m && UInt64(buffer[i]) * 2 <= m * 3 {
                sum += UInt64(buffer[i])
                kept += 1
            }
            return kept == 0 ? UInt16(m) : UInt16((sum + kept / 2) / kept)
        }
    }
}
