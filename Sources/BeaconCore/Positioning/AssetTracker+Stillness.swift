/// Whether a tag stands, and where it stands: the belief follows each second, the anchor
/// keeps everything since the tag stopped (`StillAnchor`), and a tag that has stood for
/// `settle` is placed by the anchor until its readings say it moved.
extension AssetTracker {
    /// How far the belief must be from a place the readings left for the tag to be followed.
    static let follow = 2.0
    /// Ticks running the belief must be `follow` away: a shadow passing moves it for one.
    static let followTicks = 2
    /// Within this of the place it left, a new stay is the old one.
    static let rejoin = 1.0
    /// A tag whose readings have fitted its anchor this long stands. Shorter, and a walk's
    /// slow stretch is taken for a stop (the detector needs an anchor's mean to be a mean);
    /// longer, and a stop is followed by the wandering belief for longer.
    static let settle = TimeSpan.seconds(15)

    /// Weighs the tick's readings against asset `a`'s anchor (a new one when they left it, or
    /// the level changed) and, once it has stood for `settle`, returns the anchor's place and
    /// spread (its cells kept for `weighZones`).
    ///
    /// When the readings leave an anchor the tag had settled on, its place is kept (`left`)
    /// until the belief is `follow` from it — a walk, followed from that tick — or the new
    /// anchor settles: within `rejoin` of the old place, the readings' departure was
    /// shadowing, and the two anchors become one.
    ///
    /// Only a site that says its tags park (`motion: parked`) anchors: a walk is found seconds
    /// later than the belief alone follows it (BENCHMARKS.md "Positions that hold still").
    mutating func standStill(
        _ a: Int, grid: PositionGrid, level: Int, belief: PositionBelief, at t: Timestamp
    ) -> (Point, Double)? {
        // Every receiver on the level, not the strongest few: one chosen when it reads loud
        // would be averaged loud.
        var heard: [(receiver: Int, meanRSSI: Double, count: Int)] = []
        for (r, h) in states[a].heard.sorted(by: { $0.key < $1.key })
        where h.count > 0 && receivers[r].level == level {
            heard.append((r, h.sum / Double(h.count), h.count))
        }
        let packet = belief.packetVarianceInUse
        let persistent = belief.persistentVariance
        let believed = belief.estimate(grid: grid).position
        if var anchor = states[a].anchor, anchor.level == level {
            let moved = anchor.observe(
                heard, grid: grid, place: anchor.place ?? believed, packetVariance: packet,
                persistentVariance: persistent, at: t)
            if moved, t - anchor.since >= Self.settle, anchor.place != nil { states[a].left = anchor }
            states[a].anchor = moved ? nil : anchor
        } else {
            states[a].anchor = nil
            states[a].left = nil
        }
        if let left = states[a].left, let place = left.place {
            // Away for `followTicks` ticks running: a walk, not a shadow passing.
            states[a].awayTicks = distance(believed, place) >= Self.follow ? states[a].awayTicks + 1 : 0
            if states[a].awayTicks >= Self.followTicks { states[a].left = nil }
        } else {
            states[a].awayTicks = 0
        }
        guard let anchor = states[a].anchor else {
            // Moved, or just heard: a new anchor from the next tick's readings.
            states[a].anchor = StillAnchor(since: t, level: level)
            if let left = states[a].left { return place(a, by: left, grid: grid, belief: belief) }
            if states[a].movingSince == nil { states[a].movingSince = t }
            return nil
        }
        guard t - anchor.since >= Self.settle else {
            if let left = states[a].left { return place(a, by: left, grid: grid, belief: belief) }
            if states[a].movingSince == nil { states[a].movingSince = t }
            return nil
        }
        states[a].movingSince = nil
        let placed = place(a, by: anchor, grid: grid, belief: belief)
        if var left = states[a].left {
            states[a].left = nil
            if let before = left.place, distance(before, placed.0) < Self.rejoin {
                left.absorb(anchor)
                states[a].anchor = left
                return place(a, by: left, grid: grid, belief: belief)
            }
        }
        return placed
    }

    /// Where `anchor` places asset `a`, and its spread; its cells kept for `weighZones` and
    /// its place for its detector.
    mutating func place(_ a: Int, by anchor: StillAnchor, grid: PositionGrid, belief: PositionBelief) -> (
        Point, Double
    ) {
        let cells = anchor.cells(
            grid: grid, packetVariance: belief.packetVarianceInUse, persistentVariance: belief.persistentVariance)
        states[a].stillCells = cells
        let (placed, spread) = grid.centre { Double(cells[$0]) }
        if states[a].anchor?.since == anchor.since { states[a].anchor?.place = placed }
        return (placed, spread)
    }

    func distance(_ p: Point, _ q: Point) -> Double {
        ((p.x - q.x) * (p.x - q.x) + (p.y - q.y) * (p.y - q.y)).squareRoot()
    }

    /// Whether the asset moves now, and since when it moves or stands (nil: never placed by
    /// the belief, or its site does not anchor).
    public func motion(of asset: String) -> (moving: Bool, since: Timestamp)? {
        assetIndex[asset].flatMap(motion)
    }

    func motion(_ a: Int) -> (moving: Bool, since: Timestamp)? {
        if let left = states[a].left { return (false, left.since) }
        if let since = states[a].movingSince { return (true, since) }
        return states[a].anchor.map { (false, $0.since) }
    }

    /// Per asset with a motion: whether it moves and since when.
    public var motions: [String: (moving: Bool, since: Timestamp)] {
        var out: [String: (moving: Bool, since: Timestamp)] = [:]
        for a in states.indices { if let m = motion(a) { out[assets[a].id] = m } }
        return out
    }

    /// For the benchmarks: whether the asset is said to move.
    public func isMoving(_ asset: String) -> Bool { motion(of: asset)?.moving ?? true }
}
