/// A tag that stands is placed by its anchor (`StillAnchor`): the locator's half of
/// `AssetTracker+Stillness`, run for each asset on its own state.
extension AssetLocator {
    /// Weighs the tick's readings against the asset's anchor (a new one when they left it, or
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
    func standStill(
        _ s: inout AssetTracker.AssetState, grid: PositionGrid, level: Int, belief: PositionBelief, believed: Point,
        at t: Timestamp
    ) -> (Point, Double)? {
        // Every receiver on the level, not the strongest few: one chosen when it reads loud
        // would be averaged loud.
        let heard = levelReadings(s, level: level)
        let packet = belief.packetVarianceInUse
        let persistent = belief.persistentVariance
        if var anchor = s.anchor, anchor.level == level {
            let moved = anchor.observe(
                heard, grid: grid, place: anchor.place ?? believed, packetVariance: packet,
                persistentVariance: persistent)
            if moved, t - anchor.since >= AssetTracker.settle, anchor.place != nil { s.left = anchor }
            s.anchor = moved ? nil : anchor
        } else {
            s.anchor = nil
            s.left = nil
        }
        if let left = s.left, let place = left.place {
            // Away for `followTicks` ticks running: a walk, not a shadow passing.
            s.awayTicks = distance(believed, place) >= AssetTracker.follow ? s.awayTicks + 1 : 0
            if s.awayTicks >= AssetTracker.followTicks { s.left = nil }
        } else {
            s.awayTicks = 0
        }
        guard let anchor = s.anchor else {
            // Moved, or just heard: a new anchor from the next tick's readings.
            s.anchor = StillAnchor(since: t, level: level)
            if let left = s.left { return place(&s, by: left, grid: grid, belief: belief) }
            if s.movingSince == nil { s.movingSince = t }
            return nil
        }
        guard t - anchor.since >= AssetTracker.settle else {
            if let left = s.left { return place(&s, by: left, grid: grid, belief: belief) }
            if s.movingSince == nil { s.movingSince = t }
            return nil
        }
        s.movingSince = nil
        let placed = place(&s, by: anchor, grid: grid, belief: belief)
        if var left = s.left {
            s.left = nil
            if let before = left.place, distance(before, placed.0) < AssetTracker.rejoin {
                left.absorb(anchor)
                s.anchor = left
                return place(&s, by: left, grid: grid, belief: belief)
            }
        }
        return placed
    }

    /// Where `anchor` places asset `a`, and its spread; its cells kept for `weighZones` and
    /// its place for its detector.
    func place(
        _ s: inout AssetTracker.AssetState, by anchor: StillAnchor, grid: PositionGrid, belief: PositionBelief
    ) -> (Point, Double) {
        let cells = anchor.cells(
            grid: grid, packetVariance: belief.packetVarianceInUse, persistentVariance: belief.persistentVariance)
        s.stillCells = cells
        let (placed, spread) = grid.centre { Double(cells[$0]) }
        if s.anchor?.since == anchor.since { s.anchor?.place = placed }
        return (placed, spread)
    }

    func distance(_ p: Point, _ q: Point) -> Double {
        ((p.x - q.x) * (p.x - q.x) + (p.y - q.y) * (p.y - q.y)).squareRoot()
    }

}
