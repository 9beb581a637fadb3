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
    /// A bin and the visits in it.
    public struct Pair: Sendable, Equatable {
        public var bin: Int32
        public var count: Int32
    }

    /// The filled bins, ascending: sorted arrays merge in one pass, which is what a report
    /// over months does thousands of times.
    public private(set) var pairs: [Pair] = []
    public private(set) var total = 0
    public private(set) var max: Double?

    /// ln(1.02): each bin is 2 % wider than the one before.
    static let logRatio = 0.0198026272961797

    public init() {}

    public init(_ dwells: [Double]) {
        let bins = dwells.map { Int32(Self.bin(Swift.max(0, $0))) }.sorted()
        for bin in bins {
            if pairs.last?.bin == bin {
                pairs[pairs.count - 1].count += 1
            } else {
                pairs.append(Pair(bin: bin, count: 1))
            }
        }
        total = dwells.count
        max = dwells.map { Swift.max(0, $0) }.max()
    }

    public mutating func merge(_ other: DwellBins) {
        guard !other.pairs.isEmpty else { return }
        if let m = other.max { max = Swift.max(max ?? m, m) }
        if pairs.isEmpty {
            (pairs, total) = (other.pairs, other.total)
            return
        }
        var merged: [Pair] = []
        merged.reserveCapacity(pairs.count + other.pairs.count)
        var i = 0, j = 0
        while i < pairs.count || j < other.pairs.count {
            if j == other.pairs.count || (i < pairs.count && pairs[i].bin < other.pairs[j].bin) {
                merged.append(pairs[i])
                i += 1
            } else if i == pairs.count || other.pairs[j].bin < pairs[i].bin {
                merged.append(other.pairs[j])
                j += 1
            } else {
                // Saturating: a damaged stored row may hold any count a bin can.
                let count = Int32(clamping: Int(pairs[i].count) + Int(other.pairs[j].count))
                merged.append(Pair(bin: pairs[i].bin, count: count))
                i += 1
                j += 1
            }
        }
        pairs = merged
        total += other.total
    }

    /// The nearest-rank percentile, as the middle of its bin (never above the largest dwell).
    public func percentile(_ q: Double) -> Double? {
        guard total > 0 else { return nil }
        let rank = Swift.min(total, Swift.max(1, Int((q * Double(total)).rounded(.up))))
        var seen = 0
        for pair in pairs {
            seen += Int(pair.count)
            // A stored row without its max (damaged) is read as bins alone.
            if seen >= rank {
                return max.map { Swift.min(Self.middle(of: Int(pair.bin)), $0) } ?? Self.middle(of: Int(pair.bin))
            }
        }
        return max
    }

    /// Visits under a second share bin 0 (`middle` 0.5 s).
    static func bin(_ s: Double) -> Int { s < 1 ? 0 : 1 + Int(log(s) / logRatio) }

    /// The value a bin stands for (its middle): what a percentile read from the bins gives.
    public static func middleValue(of bin: Int) -> Double { middle(of: bin) }

    static func middle(of bin: Int) -> Double { bin == 0 ? 0.5 : exp((Double(bin - 1) + 0.5) * logRatio) }

    /// "bin:count" pairs, space-separated, then "max=seconds": how the state store keeps them.
    public var text: String {
        pairs.map { "\($0.bin):\($0.count)" }.joined(separator: " ") + (max.map { " max=\($0)" } ?? "")
    }

    /// Reads `text`; a pair it cannot read is left out. Read byte by byte: a 90-day report
    /// reads thousands of these.
    public init(text: String) {
        var bin = 0, count = 0, digits = 0
        var inCount = false, bad = false, sorted = true
        var found: [Pair] = []
        var utf8 = text.utf8.makeIterator()
        func finish() {
            if inCount, !bad, digits > 0, count > 0, bin <= Int32.max, count <= Int32.max {
                if let last = found.last, Int32(bin) <= last.bin { sorted = false }
                found.append(Pair(bin: Int32(bin), count: Int32(count)))
            }
            (bin, count, digits, inCount, bad) = (0, 0, 0, false, false)
        }
        while let byte = utf8.next() {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let d = Int(byte - UInt8(ascii: "0"))
                if inCount { count = count &* 10 &+ d } else { bin = bin &* 10 &+ d }
                digits += 1
                if digits > 9 { bad = true }
            case UInt8(ascii: ":"):
                if inCount || digits == 0 { bad = true }
                inCount = true
                digits = 0
            case UInt8(ascii: " "):
                finish()
            case UInt8(ascii: "m"):
                // "max=seconds", always last.
                var rest: [UInt8] = []
                while let b = utf8.next() { rest.append(b) }
                if rest.starts(with: Array("ax=".utf8)),
                    let m = Double(String(decoding: rest.dropFirst(3), as: UTF8.self)), m.isFinite, m >= 0
                {
                    max = m
                }
                bad = true
            default:
                bad = true
            }
        }
        finish()
        if sorted {
            pairs = found
        } else {
            // A damaged row: sorted and its repeated bins added up in one pass, not merged pair
            // by pair (quadratic in its length).
            for pair in found.sorted(by: { $0.bin < $1.bin }) {
                if pairs.last?.bin == pair.bin {
                    pairs[pairs.count - 1].count = Int32(clamping: Int(pairs[pairs.count - 1].count) + Int(pair.count))
                } else {
                    pairs.append(pair)
                }
            }
        }
        total = pairs.reduce(0) { $0 + Int($1.count) }
    }
}
