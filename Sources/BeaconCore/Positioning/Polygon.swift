/// A zone's outline. Point-in-polygon by the crossing rule (concave outlines included), with
/// points on an edge counting as inside, and the distance to the outline for hysteresis.
public struct Polygon: Sendable, Equatable {
    public let points: [Point]

    public init(_ points: [Point]) { self.points = points }

    /// True inside or on the outline.
    public func contains(_ p: Point) -> Bool {
        guard points.count >= 3 else { return false }
        if distanceToEdge(p) < 1e-9 { return true }
        var inside = false
        var j = points.count - 1
        for i in points.indices {
            let a = points[i]
            let b = points[j]
            if (a.y > p.y) != (b.y > p.y) {
                let xCross = a.x + (p.y - a.y) * (b.x - a.x) / (b.y - a.y)
                if p.x < xCross { inside.toggle() }
            }
            j = i
        }
        return inside
    }

    /// Distance from `p` to the nearest edge.
    public func distanceToEdge(_ p: Point) -> Double {
        var best = Double.infinity
        var j = points.count - 1
        for i in points.indices {
            best = min(best, Polygon.segmentDistance(p, points[j], points[i]))
            j = i
        }
        return best
    }

    /// Positive inside, negative outside: how far past the edge a point is.
    public func signedDistance(_ p: Point) -> Double {
        let d = distanceToEdge(p)
        return contains(p) ? d : -d
    }

    /// The largest distance from the outline found at the vertices' centroid or on a coarse
    /// grid inside: how deep the zone is, so that hysteresis never asks for more than that.
    public var depth: Double {
        guard points.count >= 3 else { return 0 }
        let xs = points.map(\.x)
        let ys = points.map(\.y)
        var best = 0.0
        let steps = 12
        for i in 0...steps {
            for j in 0...steps {
                let p = Point(
                    x: xs.min()! + (xs.max()! - xs.min()!) * Double(i) / Double(steps),
                    y: ys.min()! + (ys.max()! - ys.min()!) * Double(j) / Double(steps))
                best = max(best, signedDistance(p))
            }
        }
        return best
    }

    /// The point of the outline nearest to `p`.
    public func nearestPoint(to p: Point) -> Point {
        var best = p
        var bestDistance = Double.infinity
        var j = points.count - 1
        for i in points.indices {
            let a = points[j]
            let b = points[i]
            let dx = b.x - a.x
            let dy = b.y - a.y
            let length2 = dx * dx + dy * dy
            let t = length2 > 0 ? min(1, max(0, ((p.x - a.x) * dx + (p.y - a.y) * dy) / length2)) : 0
            let c = Point(x: a.x + t * dx, y: a.y + t * dy)
            let d = (c.x - p.x) * (c.x - p.x) + (c.y - p.y) * (c.y - p.y)
            if d < bestDistance {
                bestDistance = d
                best = c
            }
            j = i
        }
        return best
    }

    static func segmentDistance(_ p: Point, _ a: Point, _ b: Point) -> Double {
        let dx = b.x - a.x
        let dy = b.y - a.y
        let length2 = dx * dx + dy * dy
        var t = length2 > 0 ? ((p.x - a.x) * dx + (p.y - a.y) * dy) / length2 : 0
        t = min(1, max(0, t))
        let cx = a.x + t * dx - p.x
        let cy = a.y + t * dy - p.y
        return (cx * cx + cy * cy).squareRoot()
    }
}
