/// A position never moves faster than a tag walks: the tracker's half of locating, after
/// `AssetLocator` made the tick's fix.
extension AssetTracker {
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

extension AssetTracker {
    /// Every asset's fix of the tick at `t`, by asset; each asset's on the shard that owns it
    /// when `runner` lends more than one thread. An asset's fix depends on its own state and
    /// the site alone, so the fixes are the same however the assets are shared out.
    mutating func locateAll(at t: Timestamp, runner: (any ShardRunner)?) -> [AssetLocator.Located?] {
        var located = [AssetLocator.Located?](repeating: nil, count: states.count)
        let locator = self.locator
        let ids = assets.map(\.id)
        if let runner, runner.shards > 1, states.count > 1 {
            let shards = runner.shards
            states.withUnsafeMutableBufferPointer { states in
                located.withUnsafeMutableBufferPointer { located in
                    let lent = ShardedStates(states: states, outputs: located)
                    runner.run { shard in
                        for a in lent.owned(by: shard, of: shards) {
                            lent.outputs[a] = locator.locate(&lent.states[a], asset: ids[a], at: t)
                        }
                    }
                }
            }
        } else {
            for a in states.indices { located[a] = locator.locate(&states[a], asset: ids[a], at: t) }
        }
        for fix in located {
            guard let fix else { continue }
            if fix.held { work.held += 1 } else if locator.grid != nil { work.full += 1 }
        }
        return located
    }
}
