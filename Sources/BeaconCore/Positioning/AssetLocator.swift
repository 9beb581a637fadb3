/// Where one asset is: each receiver's range from its smoothed RSSI, the belief over the
/// floor's cells (or multilateration without a floor), and how much of the belief lies in each
/// zone.
///
/// Why apart from the tracker: this is the tick's costly part, and it reads nothing but the
/// site's fixed half and the asset's own state, so the engine can run it for many assets at
/// once on the gateway's cores (`ShardRunner`, issue 64) while everything that tells events
/// runs after it, asset by asset in the order it always had.
struct AssetLocator: Sendable {
    let settings: PositioningSettings
    let receivers: [SiteReceiver]
    let calibrations: [ReceiverCalibration?]
    let floor: Polygon?
    /// The floor's cells for the Bayes locator (nil: least squares on smoothed ranges).
    let grid: PositionGrid?
    /// Per zone: its level and the grid's cells inside it (nil for a proximity zone).
    let zoneCells: [(level: Int, cells: [Int])?]

    /// One asset's fix of a tick, and whether its belief was held rather than moved.
    struct Located: Sendable {
        var fix: AssetFix
        var ranges: [Int: Double]
        var held: Bool
    }

    /// The fix from the strongest fresh readings on the strongest receivers' level; with a
    /// grid, the zones' masses are weighed too.
    func locate(_ s: inout AssetTracker.AssetState, asset id: String, at t: Timestamp) -> Located? {
        defer { s.heard = [:] }
        var fresh: [(receiver: Int, rssi: Double)] = []
        for (r, reading) in s.readings where t - reading.lastSeen <= AssetTracker.readingFreshness {
            fresh.append((r, reading.filter.estimate))
        }
        guard !fresh.isEmpty else { return nil }
        fresh.sort { $0.rssi != $1.rssi ? $0.rssi > $1.rssi : $0.receiver < $1.receiver }
        let level = strongestLevel(fresh.map(\.receiver))
        let used = Array(fresh.filter { receivers[$0.receiver].level == level }.prefix(settings.maxReceivers))
        var ranges: [Int: Double] = [:]
        var inputs: [Multilateration.Range] = []
        for (r, rssi) in used {
            let d = horizontalRange(s, receiver: r, rssi: rssi)
            ranges[r] = d
            inputs.append(Multilateration.Range(position: receivers[r].position, distance: d))
        }
        let position: Point
        let accuracy: Double
        var held = false
        if let grid {
            let moved = believe(&s, grid: grid, level: level, receivers: used.map(\.receiver), at: t)
            (position, accuracy, held) = (moved.position, max(moved.spread, 0.3), moved.held)
            // A held belief's mass in each zone is the one it had.
            if !held { weighZones(&s, level: level) }
        } else {
            guard let solved = Multilateration.solve(inputs) else { return nil }
            let inside = floor.map { $0.contains(solved.position) } ?? true
            (position, accuracy) = (
                inside ? solved.position : floor!.nearestPoint(to: solved.position), solved.accuracy
            )
        }
        let fix = AssetFix(
            asset: id, position: position, level: level, accuracy: accuracy, zones: [],
            receivers: used.map { receivers[$0.receiver].id })
        return Located(fix: fix, ranges: ranges, held: held)
    }

    /// Moves the asset's belief to `t` and weighs it by the packets `used` heard since the
    /// last tick (the strongest `max_receivers` on `level`); a new level starts a new belief.
    /// A settled belief whose readings have not left it is held (`BeliefHold`).
    func believe(
        _ s: inout AssetTracker.AssetState, grid: PositionGrid, level: Int, receivers used: [Int], at t: Timestamp
    ) -> (position: Point, spread: Double, held: Bool) {
        let receiversUsed = used.sorted()
        var heard: [(receiver: Int, meanRSSI: Double, count: Int)] = []
        for r in receiversUsed {
            guard let h = s.heard[r], h.count > 0 else { continue }
            heard.append((r, h.sum / Double(h.count), h.count))
        }
        if settings.holdStill, var hold = s.settled, hold.used == receiversUsed, s.beliefLevel == level,
            let belief = s.belief,
            hold.holds(
                heard, grid: grid, packetVariance: belief.packetVarianceInUse,
                persistentVariance: belief.persistentVariance),
            stands(&s, grid: grid, level: level, belief: belief)
        {
            // The tick changed nothing the belief did not expect: it stays where it settled,
            // and the next tick that moves it moves it by one tick's time.
            s.beliefAt = t
            hold.ticks += 1
            s.settled = hold
            return (hold.position, hold.spread, true)
        }
        s.settled = nil
        var belief: PositionBelief
        var dt = 0.0
        if let previous = s.belief, s.beliefLevel == level, let at = s.beliefAt {
            belief = previous
            // Taken out while it changes, so that its cells are not copied
            s.belief = nil
            dt = (t - at).seconds
            belief.predict(grid: grid, dt: dt)
        } else {
            belief = PositionBelief(grid: grid)
        }
        for h in heard {
            let sums = s.heard[h.receiver]!
            belief.learnPacketVariance(sum: sums.sum, squares: sums.squares, count: sums.count)
        }
        belief.update(grid: grid, heard: heard)
        let (mean, spread) = belief.estimate(grid: grid)
        belief.learnPersistentVariance(grid: grid, at: mean, heard: heard)
        belief.track(mean, dt: dt, motion: grid.motion)
        s.belief = belief
        s.beliefLevel = level
        s.beliefAt = t
        var out: (position: Point, spread: Double)
        if grid.motion.anchors,
            let still = standStill(&s, grid: grid, level: level, belief: belief, believed: mean, at: t)
        {
            out = still
        } else {
            // The belief treats each tick's persistent error as new, so a standing tag's spread
            // shrinks as if it averaged away; shadowing by shelves and walls does not. Half the
            // learned per-tick deviation is taken to hold for the pause: with it the 1-σ radius
            // covers the truth 70 % of the time on the store (45 % without), BENCHMARKS.md.
            let lasting = grid.persistentError(
                at: mean, receivers: heard.map(\.receiver), sigma: 0.5 * belief.persistentVariance.squareRoot())
            out = (mean, (spread * spread + lasting * lasting).squareRoot())
        }
        s.recent.observe(heard)
        let anchored = grid.motion.anchors ? s.anchor?.place != nil && s.left == nil && s.movingSince == nil : nil
        s.settled = BeliefHold.settle(
            belief: belief, recent: &s.recent, anchored: anchored, position: out.position, spread: out.spread)
        s.settled?.used = receiversUsed
        return (out.position, out.spread, false)
    }

    /// On a site whose tags park, whether the anchor's detector finds the tick's readings
    /// where the tag stands (they are then folded in); true elsewhere. A tick whose readings
    /// left the anchor moves the belief in full, which weighs them against the anchor anew.
    func stands(
        _ s: inout AssetTracker.AssetState, grid: PositionGrid, level: Int, belief: PositionBelief
    ) -> Bool {
        guard grid.motion.anchors else { return true }
        guard var anchor = s.anchor, anchor.level == level, let place = anchor.place else { return false }
        let moved = anchor.observe(
            levelReadings(s, level: level), grid: grid, place: place, packetVariance: belief.packetVarianceInUse,
            persistentVariance: belief.persistentVariance)
        if !moved { s.anchor = anchor }
        return !moved
    }

    /// This tick's packets of every receiver on `level`, by receiver.
    func levelReadings(_ s: AssetTracker.AssetState, level: Int) -> [(receiver: Int, meanRSSI: Double, count: Int)] {
        s.heard.sorted(by: { $0.key < $1.key }).compactMap { r, h in
            h.count > 0 && receivers[r].level == level ? (r, h.sum / Double(h.count), h.count) : nil
        }
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
    func horizontalRange(_ s: AssetTracker.AssetState, receiver r: Int, rssi: Double) -> Double {
        let calibration = calibrations[r]
        let reference = calibration?.rssiAt1m ?? s.readings[r]?.frameRSSIAt1m ?? AssetTracker.defaultRSSIAt1m
        let d = PathLoss.distance(rssi: rssi, rssiAt1m: reference, exponent: calibration?.pathLossExponent ?? 2.0)
        guard let z = receivers[r].z, let tag = settings.tagHeight else { return d }
        let dz = z - tag
        return (max(d * d - dz * dz, 0)).squareRoot()
    }

    /// How much of the asset's belief lies in each zone on `level`.
    func weighZones(_ s: inout AssetTracker.AssetState, level: Int) {
        guard let belief = s.belief else {
            s.zoneMass = []
            return
        }
        // A still tag's zones are weighed on what placed it: everything since it stopped.
        let still = s.stillCells
        s.stillCells = nil
        s.zoneMass = zoneCells.map { zone in
            guard let zone, zone.level == level else { return 0 }
            var mass: Float = 0
            if let still {
                for k in zone.cells { mass += still[k] }
            } else {
                for k in zone.cells { mass += belief.probability(k) }
            }
            return Double(mass)
        }
    }
}
