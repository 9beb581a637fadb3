/// Where an asset is: each receiver's range from its smoothed RSSI, the belief over the floor's
/// cells (or multilateration without a floor), and a speed no tag walks at refused.
extension AssetTracker {
    /// The fix from the strongest fresh readings on the strongest receivers' level.
    mutating func locate(_ a: Int, at t: Timestamp) -> (fix: AssetFix, ranges: [Int: Double])? {
        defer { states[a].heard = [:] }
        var fresh: [(receiver: Int, rssi: Double)] = []
        for (r, reading) in states[a].readings where t - reading.lastSeen <= AssetTracker.readingFreshness {
            fresh.append((r, reading.filter.estimate))
        }
        guard !fresh.isEmpty else { return nil }
        fresh.sort { $0.rssi != $1.rssi ? $0.rssi > $1.rssi : $0.receiver < $1.receiver }
        let level = strongestLevel(fresh.map(\.receiver))
        let used = Array(fresh.filter { receivers[$0.receiver].level == level }.prefix(settings.maxReceivers))
        var ranges: [Int: Double] = [:]
        var inputs: [Multilateration.Range] = []
        for (r, rssi) in used {
            let d = horizontalRange(a, receiver: r, rssi: rssi)
            ranges[r] = d
            inputs.append(Multilateration.Range(position: receivers[r].position, distance: d))
        }
        let position: Point
        let accuracy: Double
        if let grid {
            let (mean, spread) = believe(a, grid: grid, level: level, receivers: used.map(\.receiver), at: t)
            (position, accuracy) = (mean, max(spread, 0.3))
        } else {
            guard let solved = Multilateration.solve(inputs) else { return nil }
            let inside = floor.map { $0.contains(solved.position) } ?? true
            (position, accuracy) = (
                inside ? solved.position : floor!.nearestPoint(to: solved.position), solved.accuracy
            )
        }
        return (
            AssetFix(
                asset: assets[a].id, position: position, level: level, accuracy: accuracy, zones: [],
                receivers: used.map { receivers[$0.receiver].id }), ranges
        )
    }

    /// Moves asset `a`'s belief to `t` and weighs it by the packets `used` heard since the
    /// last tick (the strongest `max_receivers` on `level`); a new level starts a new belief.
    mutating func believe(_ a: Int, grid: PositionGrid, level: Int, receivers used: [Int], at t: Timestamp)
        -> (Point, Double)
    {
        var belief: PositionBelief
        var dt = 0.0
        if let previous = states[a].belief, states[a].beliefLevel == level, let at = states[a].beliefAt {
            belief = previous
            // Taken out while it changes, so that its cells are not copied
            states[a].belief = nil
            dt = (t - at).seconds
            belief.predict(grid: grid, dt: dt)
        } else {
            belief = PositionBelief(grid: grid)
        }
        var heard: [(receiver: Int, meanRSSI: Double, count: Int)] = []
        for r in used.sorted() {
            guard let h = states[a].heard[r], h.count > 0 else { continue }
            heard.append((r, h.sum / Double(h.count), h.count))
            belief.learnPacketVariance(sum: h.sum, squares: h.squares, count: h.count)
        }
        belief.update(grid: grid, heard: heard)
        let (mean, spread) = belief.estimate(grid: grid)
        belief.learnPersistentVariance(grid: grid, at: mean, heard: heard)
        belief.track(mean, dt: dt, motion: grid.motion)
        states[a].belief = belief
        states[a].beliefLevel = level
        states[a].beliefAt = t
        if grid.motion.anchors, let still = standStill(a, grid: grid, level: level, belief: belief, at: t) {
            return still
        }
        // The belief treats each tick's persistent error as new, so a standing tag's spread
        // shrinks as if it averaged away; shadowing by shelves and walls does not. Half the
        // learned per-tick deviation is taken to hold for the pause: with it the 1-σ radius
        // covers the truth 70 % of the time on the store (45 % without), BENCHMARKS.md.
        let lasting = grid.persistentError(
            at: mean, receivers: heard.map(\.receiver), sigma: 0.5 * belief.persistentVariance.squareRoot())
        return (mean, (spread * spread + lasting * lasting).squareRoot())
    }

    /// The level most of the three strongest receivers are on (the strongest breaks a tie).
    func strongestLevel(_ strongestFirst: [Int]) -> Int {
        let top = strongestFirst.prefix(3).map { receivers[$0].level }
        var counts: [Int: Int] = [:]
        for level in top { counts[level, default: 0] += 1 }
        let best = counts.values.max() ?? 0
        return top.first { counts[$0] == best } ?? 0
    }

    /// SPEC §3 distance, reduced to its part along the floor when the receiver's height and
    /// the tags' are known (a receiver 1 m above the tag hears it 1 m away when right above).
    func horizontalRange(_ a: Int, receiver r: Int, rssi: Double) -> Double {
        let calibration = calibrations[r]
        let reference =
            calibration?.rssiAt1m ?? states[a].readings[r]?.frameRSSIAt1m ?? AssetTracker.defaultRSSIAt1m
        let d = PathLoss.distance(rssi: rssi, rssiAt1m: reference, exponent: calibration?.pathLossExponent ?? 2.0)
        guard let z = receivers[r].z, let tag = settings.tagHeight else { return d }
        let dz = z - tag
        return (max(d * d - dz * dz, 0)).squareRoot()
    }

    /// A position never moves faster than `max_speed` from the previous estimate.
    func limitSpeed(_ a: Int, _ fix: AssetFix, at t: Timestamp) -> AssetFix {
        guard let previous = states[a].estimate, let at = states[a].estimatedAt, previous.level == fix.level else {
            return fix
        }
        let dx = fix.position.x - previous.position.x
        let dy = fix.position.y - previous.position.y
        let moved = (dx * dx + dy * dy).squareRoot()
        let allowed = settings.maxSpeed * (t - at).seconds
        guard moved > allowed, moved > 0 else { return fix }
        var limited = fix
        limited.position = Point(
            x: previous.position.x + dx * allowed / moved, y: previous.position.y + dy * allowed / moved)
        return limited
    }
}
