/// Whether an asset is in a zone, with boundary hysteresis: the state changes only when the
/// position is `hysteresis / 2` past the edge on the other side (never more than half the
/// zone's own depth), so a fix jittering on an edge keeps its state. ESPresense users see
/// about a fifth of boundary crossings reported in the wrong room and add one-minute holds
/// by hand; a spatial margin removes the flapping without delaying clean crossings.
struct ZoneMembership: Sendable, Equatable {
    var inside = false
    var since: Timestamp
    /// Per alarm watching this zone: whether its dwell alert fired during this visit.
    var dwellFired: Set<Int> = []
    /// The visits (`zone.visit`), decided apart from the live state above.
    var visits = VisitSmoother()

    init(at t: Timestamp) { since = t }

    mutating func shift(by d: TimeSpan) {
        since = since + d
        visits.shift(by: d)
    }

    /// Applies a signed depth (positive inside); returns true when the state changed.
    mutating func update(depth: Double, margin: Double, at t: Timestamp) -> Bool {
        let changed = inside ? depth < -margin : depth > margin
        guard changed else { return false }
        inside.toggle()
        since = t
        dwellFired = []
        return true
    }

    /// Leaves the zone (the asset went silent). True when it was inside.
    mutating func leave(at t: Timestamp) -> Bool {
        guard inside else { return false }
        inside = false
        since = t
        dwellFired = []
        return true
    }
}

/// A zone as the tracker evaluates it.
struct ZoneRuntime: Sendable {
    enum Shape: Sendable {
        case polygon(level: Int, outline: Polygon, margin: Double)
        case nearReceiver(receiver: Int, within: Double, margin: Double)
    }

    var id: String
    var shape: Shape
    /// The Bayes grid's cells whose centres lie inside the outline (empty for a proximity
    /// zone or without a grid): the belief's mass over them is how sure the locator is that
    /// the asset is inside.
    var cells: [Int] = []

    init(_ zone: ZoneDefinition, receivers: [String: Int], hysteresis: Double) {
        id = zone.id
        switch zone.shape {
        case let .polygon(level, points):
            let outline = Polygon(points)
            shape = .polygon(level: level, outline: outline, margin: min(hysteresis / 2, outline.depth / 2))
        case let .nearReceiver(receiver, within):
            shape = .nearReceiver(receiver: receivers[receiver] ?? -1, within: within, margin: hysteresis / 2)
        }
    }

    /// How far inside (positive) or outside (negative) the zone an estimate is, and the
    /// margin to use. A proximity zone is judged by that receiver's own range to the tag.
    func depth(position: Point, level: Int, ranges: [Int: Double]) -> (depth: Double, margin: Double) {
        switch shape {
        case let .polygon(zoneLevel, outline, margin):
            guard zoneLevel == level else { return (-.infinity, margin) }
            return (outline.signedDistance(position), margin)
        case let .nearReceiver(receiver, within, margin):
            guard let range = ranges[receiver] else { return (-.infinity, margin) }
            return (within - range, margin)
        }
    }
}
