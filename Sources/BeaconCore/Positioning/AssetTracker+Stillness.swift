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
