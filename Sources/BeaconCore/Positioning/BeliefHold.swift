/// A settled belief kept while the tag's readings stay where they were (issue 64).
///
/// Why: moving a belief costs a blur and a pass over the floor's cells per receiver, every
/// second, whether the tag moved or not; in a warehouse most tags stand for hours. A tag whose
/// belief has settled (it stands: little of it walks, or its anchor places it) and whose
/// readings have not left the ones it settled on learns nothing the belief does not already
/// say, so the tick keeps the position and accuracy it had. Whether they left is the anchor's
/// question (`StillAnchor`), asked as cheaply: a likelihood ratio on every other cell each way
/// of how the receivers' recent readings departed from their means, but tuned to ask early —
/// a false alarm here costs one full tick, not a position. One reading far outside its noise,
/// a receiver not heard before, or the ratio adding up, and the tick moves the belief in full,
/// at once; so does every `refresh`-th tick, so that what the belief learns of the channel
/// stays current.
struct BeliefHold: Sendable {
    /// What the held ticks publish: the position and accuracy the belief settled on.
    let position: Point
    let spread: Double
    /// Per receiver: the mean the tick's readings are weighed against, and its variance.
    let reference: [Int: (mean: Double, variance: Double)]
    /// The receivers the fix used when it settled: one falling silent (or a new one) changes
    /// what the belief would say, and its accuracy, so it ends the hold.
    var used: [Int] = []
    /// Per receiver: the departures of the recent ticks' readings from `reference` (each tick
    /// weighing `recentWeight` less at the next) and their packets so weighed.
    private var recent: [Int: (sum: Double, count: Double)] = [:]
    /// The likelihood ratio's CUSUM.
    private(set) var evidence = 0.0
    var ticks = 0

    /// Held this many ticks running, the next moves the belief in full.
    static let refresh = 30
    /// A belief settles when less than this of it walks (`stop_and_go`, `continuous`) for
    /// `settleTicks` ticks running: at one packet a second a walk's first ticks can look still.
    static let walkingLimit = 0.2
    static let settleTicks = 5
    /// Nor does a belief whose estimate drifts faster than this (m/s) settle: a slow walk.
    static let settledSpeed = 0.2
    /// A reading this many of its σ from its mean moves the belief at once.
    static let departure = 3.0
    /// The ratio's drift per tick and the CUSUM past which the readings have left: half and a
    /// quarter of the anchor's, which must not take a shadow for a walk.
    static let drift = 1.0
    static let threshold = 3.0

    /// A hold on a belief just moved, when it has settled: `anchored`, on a site whose tags
    /// park, says whether the anchor places the tag; elsewhere the belief must mostly stand
    /// for `settleTicks`. Nil while it has not settled or too little is known of the readings.
    static func settle(
        belief: PositionBelief, recent: inout RecentReadings, anchored: Bool?, position: Point, spread: Double
    ) -> BeliefHold? {
        let speed = (belief.velocity.x * belief.velocity.x + belief.velocity.y * belief.velocity.y).squareRoot()
        let settled = anchored != false && belief.walkingProbability < walkingLimit && speed < settledSpeed
        recent.settledTicks = settled ? recent.settledTicks + 1 : 0
        guard recent.settledTicks >= settleTicks else { return nil }
        let tickVariance = belief.packetVarianceInUse + belief.persistentVariance
        let reference = recent.references(tickVariance: tickVariance)
        guard !reference.isEmpty else { return nil }
        return BeliefHold(position: position, spread: spread, reference: reference)
    }

    /// Whether this tick's readings leave the belief as it is (each receiver's packets' mean
    /// and count); false ends the hold.
    mutating func holds(
        _ heard: [(receiver: Int, meanRSSI: Double, count: Int)], grid: PositionGrid, packetVariance: Double,
        persistentVariance: Double
    ) -> Bool {
        guard ticks < Self.refresh else { return false }
        let weight = StillAnchor.recentWeight
        for (r, old) in recent where !heard.contains(where: { $0.receiver == r }) {
            recent[r] = (weight * old.sum, weight * old.count)
        }
        for h in heard {
            guard let ref = reference[h.receiver] else { return false }
            let d = h.meanRSSI - ref.mean
            let variance = packetVariance / Double(h.count) + persistentVariance + ref.variance
            if d * d > Self.departure * Self.departure * variance { return false }
            let old = recent[h.receiver] ?? (0, 0)
            recent[h.receiver] = (weight * old.sum + d * Double(h.count), weight * old.count + Double(h.count))
        }
        var departures: [(receiver: Int, d: Float, scale: Float)] = []
        for (r, x) in recent.sorted(by: { $0.key < $1.key }) where x.count > 0.5 {
            let variance = packetVariance / x.count + persistentVariance + reference[r]!.variance
            departures.append((r, Float(x.sum / x.count), Float(-0.5 / variance)))
        }
        let ratio = grid.departureRatio(departures, at: position, stride: StillAnchor.stride)
        evidence = max(0, evidence + ratio - Self.drift)
        return evidence <= Self.threshold
    }
}

/// Each receiver's recent tick means, smoothed, as the belief last took them in: what a
/// held tick's readings are compared with.
struct RecentReadings: Sendable {
    private var means: [Int: (mean: Double, ticks: Int)] = [:]
    /// Full ticks running the belief has looked settled.
    var settledTicks = 0
    /// Each tick's mean weighs this much in the smoothed one.
    static let weight = 0.3
    /// A receiver's mean of fewer ticks than this is no reference yet.
    static let minimumTicks = 3

    mutating func observe(_ heard: [(receiver: Int, meanRSSI: Double, count: Int)]) {
        for h in heard {
            if let old = means[h.receiver] {
                means[h.receiver] = (old.mean + Self.weight * (h.meanRSSI - old.mean), old.ticks + 1)
            } else {
                means[h.receiver] = (h.meanRSSI, 1)
            }
        }
    }

    /// The receivers heard for long enough, with their smoothed mean's variance for a tick's
    /// of `tickVariance` (an exponential mean keeps w / (2 - w) of it).
    func references(tickVariance: Double) -> [Int: (mean: Double, variance: Double)] {
        let share = Self.weight / (2 - Self.weight)
        var out: [Int: (mean: Double, variance: Double)] = [:]
        for (r, m) in means where m.ticks >= Self.minimumTicks { out[r] = (m.mean, share * tickVariance) }
        return out
    }
}
