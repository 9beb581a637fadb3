#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a tag has heard since it last moved, and whether what it hears now still fits.
///
/// Why beside the belief rather than in it: the belief must follow a walk within a second or
/// two, so it forgets; a still tag's readings wander with shadowing that holds for seconds,
/// and a belief that forgets wanders with them (a tag put down for an hour was placed 1.7 m
/// off at the median, its published position jumping a metre or more a third of the time,
/// BENCHMARKS.md "Positions that hold still"). An anchor keeps every packet since the tag
/// stopped, so its place sharpens with the square root of the time it stands, and a
/// change detector on the readings (not on the wandering estimate) says when it moved.
///
/// The detector is a CUSUM of a likelihood ratio: each tick, how much better some other
/// place than the anchor's explains how each receiver's recent readings departed from its
/// mean. Shadowing pushes each receiver its own way and few places explain that; a walk moves
/// them together as the geometry says. On the simulated store a walk is found 8–15 s after
/// its first step (the tag 6–12 m away), later than the belief alone follows it, which is
/// why only `motion: parked` sites anchor (BENCHMARKS.md "Positions that hold still").
struct StillAnchor: Sendable {
    /// Per receiver: the packets' RSSI sum, how many, and in how many ticks.
    struct Totals: Sendable {
        var sum = 0.0
        var count = 0
        var ticks = 0
        /// The recent packets' RSSI sum and count, each tick's weighed `recentWeight` less
        /// than the next one's.
        var recentSum = 0.0
        var recentCount = 0.0
        var mean: Double { sum / Double(max(count, 1)) }
    }

    /// The detector's drift per tick (log-likelihood ratio): shadowing alone gives a ratio
    /// of about 1 a tick (χ²(2)/2 and the search over cells), so a tick must beat 2 to count.
    /// Swept from 1 to 2.5 with thresholds 6 to 12 (BENCHMARKS.md): lower finds a walk 2–3 s
    /// sooner and takes a shadow for a move ten times as often.
    static let drift = 2.0
    /// The CUSUM above which the tag has moved.
    static let threshold = 12.0
    /// Each tick's readings weigh this much less at the next: the recent window is about
    /// two ticks, as long as a walk takes to move a receiver's reading by its noise.
    static let recentWeight = 0.5
    /// Seconds over which shadowing holds: a mean over `T` seconds keeps `τ / T` of its
    /// variance (the simulated store's is 2 s; a person standing by a tag holds it longer).
    static let shadowingHolds = 3.0
    /// Variance (dB²) no averaging removes: the path-loss model's own error at the spot. It
    /// keeps the anchor's accuracy from claiming centimetres.
    static let modelVariance = 1.0
    /// An anchor this young says nothing: its means are not yet means.
    static let minimumTicks = 2
    /// The detector weighs every `stride`-th cell each way: a walk is metres, not a cell.
    static let stride = 2

    private(set) var totals: [Int: Totals] = [:]
    /// Readings of the ticks since the evidence last stood at zero.
    private var pending: [Int: Totals] = [:]
    /// When the tag was first heard standing here.
    private(set) var since: Timestamp
    private(set) var level: Int
    /// Where the anchor placed the tag last (nil before it has stood `settle`: the belief's).
    var place: Point?
    /// The CUSUM, and how many ticks it has been above zero.
    private(set) var evidence = 0.0

    init(since: Timestamp, level: Int) {
        self.since = since
        self.level = level
    }

    /// Weighs one tick's readings against the anchor, the tag taken to stand at `place`: true
    /// when they say it moved (the caller starts a new anchor), else folds them in. (A ratio
    /// on the model linearised at `place` was tried first: a walk's departures of 10 dB lie
    /// far outside its reach, and it found walks only 10 m on.)
    mutating func observe(
        _ heard: [(receiver: Int, meanRSSI: Double, count: Int)], grid: PositionGrid, place: Point,
        packetVariance: Double, persistentVariance: Double
    ) -> Bool {
        for h in heard {
            var old = totals[h.receiver] ?? Totals()
            old.recentSum = Self.recentWeight * old.recentSum + h.meanRSSI * Double(h.count)
            old.recentCount = Self.recentWeight * old.recentCount + Double(h.count)
            totals[h.receiver] = old
        }
        // Per receiver: the recent departure from its mean, and -1/(2 σ²) of it
        var departures: [(receiver: Int, d: Float, scale: Float)] = []
        // In the receivers' order: a sum in a dictionary's order differs from process to process
        for (r, old) in totals.sorted(by: { $0.key < $1.key })
        where old.ticks >= Self.minimumTicks && old.recentCount > 0.5 {
            let variance =
                packetVariance / old.recentCount + persistentVariance
                + meanVariance(old, packetVariance: packetVariance, persistentVariance: persistentVariance)
            departures.append((r, Float(old.recentSum / old.recentCount - old.mean), Float(-0.5 / variance)))
        }
        let ratio = grid.departureRatio(departures, at: place, stride: Self.stride)
        evidence = max(0, evidence + ratio - Self.drift)
        if evidence > Self.threshold { return true }
        // A receiver not heard this tick has nothing recent.
        for r in totals.keys where !heard.contains(where: { $0.receiver == r }) {
            totals[r]!.recentSum *= Self.recentWeight
            totals[r]!.recentCount *= Self.recentWeight
        }
        // Readings wait while the evidence is raised, and are folded in once it is back to
        // zero: folded in at once, a walk's first steps dragged the mean after the tag and hid
        // the walk (a pallet carried 6 m was never found so, its place creeping after it);
        // dropped, the readings that disagree with a young anchor were the ones to correct it.
        for h in heard {
            pending[h.receiver, default: Totals()].sum += h.meanRSSI * Double(h.count)
            pending[h.receiver, default: Totals()].count += h.count
            pending[h.receiver, default: Totals()].ticks += 1
        }
        guard evidence == 0 else { return false }
        for (r, p) in pending {
            totals[r, default: Totals()].sum += p.sum
            totals[r, default: Totals()].count += p.count
            totals[r, default: Totals()].ticks += p.ticks
        }
        pending = [:]
        return false
    }

    /// Takes in what a later anchor heard at the same place: the tag never left.
    mutating func absorb(_ later: StillAnchor) {
        for (r, t) in later.totals {
            totals[r, default: Totals()].sum += t.sum
            totals[r, default: Totals()].count += t.count
            totals[r, default: Totals()].ticks += t.ticks
            totals[r, default: Totals()].recentSum = t.recentSum
            totals[r, default: Totals()].recentCount = t.recentCount
        }
        evidence = 0
    }

    /// The variance of a receiver's mean over the anchor: the packets' share and the part
    /// of shadowing that has not averaged out yet.
    func meanVariance(_ totals: Totals, packetVariance: Double, persistentVariance: Double) -> Double {
        packetVariance / Double(max(totals.count, 1)) + persistentVariance
            * min(1, Self.shadowingHolds / Double(max(totals.ticks, 1)))
    }

    /// The anchor's belief over the grid's cells (uniform before its readings), normalised:
    /// every receiver's mean since the tag stopped, each weighed by what it still carries of
    /// the noise.
    func cells(grid: PositionGrid, packetVariance: Double, persistentVariance: Double) -> [Float] {
        var logLikelihood = [Float](repeating: 0, count: grid.count)
        for (r, t) in totals.sorted(by: { $0.key < $1.key }) where t.ticks >= Self.minimumTicks {
            let variance =
                meanVariance(t, packetVariance: packetVariance, persistentVariance: persistentVariance)
                + Self.modelVariance
            let scale = Float(-0.5 / variance)
            let mean = Float(t.mean)
            let expected = grid.expected[r]
            for k in 0..<grid.count {
                let e = mean - expected[k]
                logLikelihood[k] += scale * e * e
            }
        }
        var best = -Float.infinity
        for k in 0..<grid.count where grid.onFloor[k] { best = max(best, logLikelihood[k]) }
        var p = [Float](repeating: 0, count: grid.count)
        var total: Float = 0
        for k in 0..<grid.count where grid.onFloor[k] {
            p[k] = exp(logLikelihood[k] - best)
            total += p[k]
        }
        guard total > 0 else { return p }
        for k in 0..<grid.count { p[k] /= total }
        return p
    }
}
