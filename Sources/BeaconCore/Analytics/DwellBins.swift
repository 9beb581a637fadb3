#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// How long visits lasted, in bins 2 % wide (1 s to years in about 1,100 of them, few of which
/// a zone fills): what lets a report over weeks give a dwell p50 and p90 from stored days and
/// hours without keeping every visit. A percentile read from the bins is within 1 % of the
/// exact one (the bin's middle); an hour's own p50, p90 and max are kept exact beside them.
public struct DwellBins: Sendable, Equatable {
    /// Bin index → visits in it.
    public private(set) var counts: [Int: Int] = [:]
    public private(set) var total = 0
    public private(set) var max: Double?

    static let ratio = 1.02
    static let logRatio = 0.0198026272961797  // ln(1.02)

    public init() {}

    public init(_ dwells: [Double]) {
        for d in dwells { add(d) }
    }

    public mutating func add(_ seconds: Double) {
        let s = Swift.max(0, seconds)
        counts[Self.bin(s), default: 0] += 1
        total += 1
        max = Swift.max(max ?? s, s)
    }

    public mutating func merge(_ other: DwellBins) {
        for (bin, n) in other.counts { counts[bin, default: 0] += n }
        total += other.total
        if let m = other.max { max = Swift.max(max ?? m, m) }
    }

    /// The nearest-rank percentile, as the middle of its bin (never above the largest dwell).
    public func percentile(_ q: Double) -> Double? {
        guard total > 0 else { return nil }
        let rank = Swift.min(total, Swift.max(1, Int((q * Double(total)).rounded(.up))))
        var seen = 0
        for bin in counts.keys.sorted() {
            seen += counts[bin]!
            if seen >= rank { return Swift.min(Self.middle(of: bin), max!) }
        }
        return max
    }

    /// Visits under a second share bin 0 (`middle` 0.5 s).
    static func bin(_ s: Double) -> Int { s < 1 ? 0 : 1 + Int(log(s) / logRatio) }

    static func middle(of bin: Int) -> Double { bin == 0 ? 0.5 : exp((Double(bin - 1) + 0.5) * logRatio) }

    /// "bin:count" pairs, space-separated, then "max=seconds": how the state store keeps them.
    public var text: String {
        counts.keys.sorted().map { "\($0):\(counts[$0]!)" }.joined(separator: " ") + (max.map { " max=\($0)" } ?? "")
    }

    /// Reads `text`; a pair it cannot read is left out.
    public init(text: String) {
        for field in text.split(separator: " ") {
            if field.hasPrefix("max=") {
                max = Double(field.dropFirst(4))
                continue
            }
            let pair = field.split(separator: ":")
            guard pair.count == 2, let bin = Int(pair[0]), let n = Int(pair[1]), n > 0 else { continue }
            counts[bin, default: 0] += n
            total += n
        }
    }
}
