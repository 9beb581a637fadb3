/// Whether an outline is one an operator meant: a zone or floor drawn with two corners
/// swapped is a bow tie, whose "inside" by the even-odd rule is two triangles and a hole, so a
/// cart in the middle of the aisle would never be in it. The configuration refuses such an
/// outline with the edges that cross, instead of letting it run wrong for months.
extension Polygon {
    /// Twice the signed area (shoelace), positive counter-clockwise.
    var doubleSignedArea: Double {
        var sum = 0.0
        var j = points.count - 1
        for i in points.indices {
            sum += points[j].x * points[i].y - points[i].x * points[j].y
            j = i
        }
        return sum
    }

    /// The area enclosed, in square metres.
    public var area: Double { abs(doubleSignedArea) / 2 }

    /// The first two edges that cross or overlap, edge `i` running from point `i` to the next
    /// (the last back to the first); edges that share a corner only touch there, which is not
    /// a crossing. Nil for a simple outline.
    public func firstCrossing() -> (Int, Int)? {
        let n = points.count
        guard n >= 4 else { return nil }
        for i in 0..<n {
            for j in (i + 1)..<n {
                let adjacent = j == i + 1 || (i == 0 && j == n - 1)
                let a = (points[i], points[(i + 1) % n])
                let b = (points[j], points[(j + 1) % n])
                if adjacent {
                    // Neighbours share a corner; they go wrong only by folding back along each other.
                    if Self.foldsBack(a, b) { return (i, j) }
                } else if Self.segmentsMeet(a.0, a.1, b.0, b.1) {
                    return (i, j)
                }
            }
        }
        return nil
    }

    /// True when the two outlines share any point: an edge crosses, or one holds the other.
    public func overlaps(_ other: Polygon) -> Bool {
        if points.contains(where: other.contains) || other.points.contains(where: contains) { return true }
        var j = points.count - 1
        for i in points.indices {
            var l = other.points.count - 1
            for k in other.points.indices {
                if Self.segmentsMeet(points[j], points[i], other.points[l], other.points[k]) { return true }
                l = k
            }
            j = i
        }
        return false
    }

    private static func cross(_ o: Point, _ a: Point, _ b: Point) -> Double {
        (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x)
    }

    /// Whether segments pq and rs have a point in common (touching counts): outlines' edges
    /// here, and the simulator's signal paths through walls.
    public static func segmentsMeet(_ p: Point, _ q: Point, _ r: Point, _ s: Point) -> Bool {
        let eps = 1e-12
        let d1 = cross(r, s, p)
        let d2 = cross(r, s, q)
        let d3 = cross(p, q, r)
        let d4 = cross(p, q, s)
        if ((d1 > eps && d2 < -eps) || (d1 < -eps && d2 > eps)) && ((d3 > eps && d4 < -eps) || (d3 < -eps && d4 > eps))
        {
            return true
        }
        func onSegment(_ a: Point, _ b: Point, _ c: Point) -> Bool {
            min(a.x, b.x) - eps <= c.x && c.x <= max(a.x, b.x) + eps && min(a.y, b.y) - eps <= c.y
                && c.y <= max(a.y, b.y) + eps
        }
        return (abs(d1) <= eps && onSegment(r, s, p)) || (abs(d2) <= eps && onSegment(r, s, q))
            || (abs(d3) <= eps && onSegment(p, q, r)) || (abs(d4) <= eps && onSegment(p, q, s))
    }

    /// Two edges that follow each other (a's end is b's start, or the other way round) and turn
    /// back along the same line.
    private static func foldsBack(_ a: (Point, Point), _ b: (Point, Point)) -> Bool {
        let (shared, u, v): (Point, Point, Point) = a.1 == b.0 ? (a.1, a.0, b.1) : (a.0, a.1, b.0)
        guard abs(cross(shared, u, v)) <= 1e-12 else { return false }
        let dot = (u.x - shared.x) * (v.x - shared.x) + (u.y - shared.y) * (v.y - shared.y)
        return dot > 0
    }
}
