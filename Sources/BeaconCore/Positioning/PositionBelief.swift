#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// How tags move between ticks: each stands or walks, and switches between the two after a
/// mean time of `standing` or `walking` seconds; a walking tag covers `speed` m/s in any
/// direction. Why two modes rather than one blur: a standing tag then keeps its sharp belief
/// (it averages every packet of its pause) while a walking one can still follow its steps.
/// Which rates are right depends on the assets, so the site says (`positioning.motion`).
struct MotionModel: Sendable, Equatable {
    var standing: Double
    var walking: Double
    var speed = 1.2
    /// Whether a tag that stands is placed by all it was heard since it stopped (`parked`).
    var anchors = false

    init(_ motion: PositioningSettings.Motion) {
        switch motion {
        // Moves most seconds: a standing tag walks on with probability 0.7 within a second,
        // a walking one stops with 0.3 — which is one mode that keeps 30 % of the belief in
        // place each second and blurs the rest. A robot on its rounds, a forklift, a tag in a
        // hand; the recorded robot, which never stands, needs this.
        case .continuous: (standing, walking) = (-1 / log(0.3), -1 / log(0.7))
        // Stands tens of seconds between walks: carts, shoppers, staff at a shelf.
        case .stopAndGo: (standing, walking) = (20, 10)
        // Stands for minutes between moves, and is placed by its anchor while it stands; the
        // belief beside it still follows a walk as `stop_and_go` does.
        case .parked: (standing, walking) = (20, 10)
        }
        anchors = motion == .parked
    }
}

/// One tag's belief about where it is: a probability per cell of a `PositionGrid`, moved by a
/// motion model between ticks and sharpened by what each receiver heard.
///
/// Why not only least squares on smoothed ranges: a fix from 2 s of RSSI forgets everything
/// older, so a standing tag's position keeps the noise of 2 s while a walking one lags; the
/// belief keeps all that was heard, weighted by how far the tag could have moved since, and
/// keeps the floor's outline as a hard constraint. Its spread, widened by what lasting
/// shadowing costs at the spot (`AssetTracker.believe`), is the reported accuracy.
struct PositionBelief: Sendable {
    /// Per-packet RSSI noise (dB) assumed before any has been measured: shadowing and fading
    /// together, as in a busy store.
    static let packetSigma: Float = 7
    /// Noise that averaging a tick's packets does not remove (dB²): the part of shadowing that
    /// holds for seconds, and calibration error. Learned per tag from 3 dB, kept between 2 and
    /// 6 dB: below 2 dB a few lucky ticks would make the belief too sure of itself.
    static let persistentRange = 4.0...36.0

    /// Probability per cell that the tag stands there, and that it walks there.
    private(set) var still: [Float]
    private(set) var moving: [Float]
    /// The packets' RSSI variance (dB²), learned from the spread of packets within each tick:
    /// a quiet flat and a busy store differ by a factor of five in it.
    private(set) var packetVariance = Double(PositionBelief.packetSigma * PositionBelief.packetSigma)
    /// Noise that averaging a tick's packets does not remove (dB²), learned (see
    /// `persistentRange`): a flat with nothing moving has little, a busy store more.
    private(set) var persistentVariance = 9.0

    /// The packet variance as the likelihood uses it: learned, but kept between 1.5 and 10 dB,
    /// since a tag heard by few packets says little of it.
    var packetVarianceInUse: Double { min(max(packetVariance, 2.25), 100) }

    init(grid: PositionGrid) {
        let cells = grid.onFloor.filter { $0 }.count
        let p = grid.onFloor.map { $0 ? 0.5 / Float(max(cells, 1)) : 0 }
        still = p
        moving = p
    }

    /// Learns the persistent variance from how far the tick's mean RSSI of each receiver lies
    /// from what the path-loss model expects at the estimate `p`, less what the packets' own
    /// noise explains, scaled up for the two coordinates the estimate took from the same
    /// readings. Needs three receivers; with fewer the estimate fits them exactly.
    mutating func learnPersistentVariance(
        grid: PositionGrid, at p: Point, heard: [(receiver: Int, meanRSSI: Double, count: Int)]
    ) {
        guard heard.count >= 3 else { return }
        let k = grid.cell(containing: p)
        let packet = packetVarianceInUse
        let dof = Double(heard.count) / Double(heard.count - 2)
        for h in heard {
            let e = h.meanRSSI - Double(grid.expected[h.receiver][k])
            let sample = (e * e - packet / Double(h.count)) * dof
            persistentVariance += 0.02 * (sample - persistentVariance)
        }
        persistentVariance = min(
            max(persistentVariance, Self.persistentRange.lowerBound), Self.persistentRange.upperBound)
    }

    /// The walking tag's velocity (m/s), smoothed from how the estimate moved tick by tick:
    /// a walking tag keeps its course, so its walking belief drifts ahead by this rather than
    /// only spreading around where it was — which left walking tags a second or two behind.
    private(set) var velocity = (x: 0.0, y: 0.0)
    private var lastEstimate: Point?

    /// Follows the estimate: its move over `dt` seconds, smoothed (a fifth of each tick's) and
    /// capped at a brisk walk, so that a jump of the estimate does not fling the belief.
    mutating func track(_ estimate: Point, dt: Double, motion: MotionModel) {
        defer { lastEstimate = estimate }
        guard let last = lastEstimate, dt > 0 else { return }
        velocity.x += 0.2 * ((estimate.x - last.x) / dt - velocity.x)
        velocity.y += 0.2 * ((estimate.y - last.y) / dt - velocity.y)
        let speed = (velocity.x * velocity.x + velocity.y * velocity.y).squareRoot()
        let cap = 1.25 * motion.speed
        if speed > cap { velocity = (velocity.x * cap / speed, velocity.y * cap / speed) }
    }

    /// The chance that the tag is in cell `k`, standing or walking.
    func probability(_ k: Int) -> Float { still[k] + moving[k] }

    /// The chance that the tag is walking.
    var walkingProbability: Double { Double(moving.reduce(0, +)) }

    /// Moves the belief by `dt` seconds: standing tags may start to walk and walking ones
    /// stop, at the rates of the motion model; walking mass spreads by a Gaussian step.
    mutating func predict(grid: PositionGrid, dt: Double) {
        guard dt > 0 else { return }
        let start = Float(1 - exp(-dt / grid.motion.standing))
        let stop = Float(1 - exp(-dt / grid.motion.walking))
        var walking = [Float](repeating: 0, count: grid.count)
        for k in 0..<grid.count where grid.onFloor[k] {
            walking[k] = start * still[k] + (1 - stop) * moving[k]
            still[k] = (1 - start) * still[k] + stop * moving[k]
        }
        let sigma = grid.motion.speed * dt / grid.cell
        let drift = (x: velocity.x * dt / grid.cell, y: velocity.y * dt / grid.cell)
        // Only where the walking mass is more than the floor every cell keeps: elsewhere the
        // blur gives no more than the floor, which `update` gives them anyway.
        moving =
            sigma > 0.05
            ? Self.blur(walking, grid: grid, sigma: sigma, drift: drift, within: Self.window(of: walking, grid: grid))
            : walking
        var total: Float = 0
        for k in 0..<grid.count {
            if grid.onFloor[k] { total += still[k] + moving[k] } else { moving[k] = 0 }
        }
        // What the blur carried off the floor is not a place the tag can be.
        guard total > 0 else { return }
        for k in 0..<grid.count {
            still[k] /= total
            moving[k] /= total
        }
    }

    /// Folds one receiver's packets of a tick (RSSI sum, sum of squares, count) into the
    /// learned packet variance.
    mutating func learnPacketVariance(sum: Double, squares: Double, count: Int) {
        guard count >= 2 else { return }
        let mean = sum / Double(count)
        let variance = max(squares / Double(count) - mean * mean, 0) * Double(count) / Double(count - 1)
        packetVariance += 0.05 * (variance - packetVariance)
    }

    /// Weighs the belief by the mean RSSI each receiver heard (`count` packets).
    mutating func update(grid: PositionGrid, heard: [(receiver: Int, meanRSSI: Double, count: Int)]) {
        guard !heard.isEmpty else { return }
        var logLikelihood = [Float](repeating: 0, count: grid.count)
        // Per receiver heard: what each cell leaves unexplained (dB), and -1/(2 σ²)
        var residuals: [[Float]] = []
        var scales: [Float] = []
        let packet = Float(packetVarianceInUse)
        for h in heard {
            let variance = packet / Float(h.count) + Float(persistentVariance)
            let scale = -0.5 / variance
            let mean = Float(h.meanRSSI)
            let expected = grid.expected[h.receiver]
            for k in 0..<grid.count {
                let e = mean - expected[k]
                logLikelihood[k] += scale * e * e
            }
            // Kept for the carrier's body model only
            guard grid.bodyLoss > 0 else { continue }
            residuals.append(expected.map { mean - $0 })
            scales.append(scale)
        }
        let walking =
            grid.bodyLoss > 0
            ? Self.carriedLogLikelihood(
                grid: grid, receivers: heard.map(\.receiver), residuals, scales,
                cells: (0..<grid.count).filter { grid.onFloor[$0] && moving[$0] > Self.negligible },
                elsewhere: logLikelihood)
            : logLikelihood
        var best = -Float.infinity
        for k in 0..<grid.count where grid.onFloor[k] { best = max(best, logLikelihood[k], walking[k]) }
        var total: Float = 0
        for k in 0..<grid.count where grid.onFloor[k] {
            // A floor keeps every cell possible: a belief never becomes certain of the wrong place.
            // A cell already at it stays there (its likelihood is at most the best), so its
            // exponential is not needed: on a settled belief that is most cells.
            if still[k] > Self.negligible {
                still[k] = max(still[k] * exp(logLikelihood[k] - best), Self.floorMass)
            } else {
                still[k] = Self.floorMass
            }
            if moving[k] > Self.negligible {
                moving[k] = max(moving[k] * exp(walking[k] - best), Self.floorMass)
            } else {
                moving[k] = Self.floorMass
            }
            total += still[k] + moving[k]
        }
        guard total > 0 else { return }
        for k in 0..<grid.count {
            still[k] /= total
            moving[k] /= total
        }
    }

    /// The belief's mean position and its RMS radius around that mean.
    func estimate(grid: PositionGrid) -> (position: Point, spread: Double) {
        grid.centre { Double(probability($0)) }
    }
}
