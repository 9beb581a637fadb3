#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A position from ranges to receivers with known positions.
///
/// With three or more ranges: weighted non-linear least squares (Levenberg–Marquardt) on
/// the range residuals, seeded from an inverse-square weighted centroid. Each range is
/// weighted by 1/σ², with σ growing in proportion to the range, because log-distance ranges
/// carry a multiplicative error (a few dB is tens of percent of the distance). With two, the
/// point between them that splits the baseline in the ratio of the ranges; with one, the
/// receiver itself. `accuracy` is an honest 1-σ radius: the fit's covariance under the
/// range model, widened by the residuals, and never smaller than what the geometry allows.
public enum Multilateration {
    public struct Range: Sendable, Equatable {
        public var position: Point
        /// The range along the floor.
        public var distance: Double

        public init(position: Point, distance: Double) {
            self.position = position
            self.distance = distance
        }
    }

    public struct Fix: Sendable, Equatable {
        public var position: Point
        public var accuracy: Double
    }

    /// Relative range error (1 σ) of a smoothed log-distance range.
    static let relativeError = 0.25
    static let minimumSigma = 0.3

    public static func solve(_ ranges: [Range]) -> Fix? {
        let usable = ranges.filter { $0.distance.isFinite && $0.distance >= 0 }
        switch usable.count {
        case 0: return nil
        case 1: return Fix(position: usable[0].position, accuracy: max(usable[0].distance, minimumSigma))
        case 2: return solvePair(usable[0], usable[1])
        default: return solveMany(usable)
        }
    }

    /// The fix that the inverse-square weighted centroid gives (also the LM seed and a baseline).
    public static func weightedCentroid(_ ranges: [Range]) -> Point? {
        guard !ranges.isEmpty else { return nil }
        var sx = 0.0
        var sy = 0.0
        var sw = 0.0
        for r in ranges {
            let w = 1 / max(r.distance * r.distance, 0.01)
            sx += w * r.position.x
            sy += w * r.position.y
            sw += w
        }
        return Point(x: sx / sw, y: sy / sw)
    }

    static func sigma(_ d: Double) -> Double { max(minimumSigma, relativeError * d) }
    /// Residuals beyond about this many σ are treated as outliers.
    static let cauchyScale = 3.0

    static func solvePair(_ a: Range, _ b: Range) -> Fix {
        let dx = b.position.x - a.position.x
        let dy = b.position.y - a.position.y
        let baseline = (dx * dx + dy * dy).squareRoot()
        guard baseline > 1e-9 else {
            return Fix(position: a.position, accuracy: max(min(a.distance, b.distance), minimumSigma))
        }
        let t = a.distance / max(a.distance + b.distance, 1e-9)
        let p = Point(x: a.position.x + t * dx, y: a.position.y + t * dy)
        // Across the baseline two ranges cannot tell sides: the circles' half-chord (or the
        // smaller range when they do not meet) is how far off the fix may be.
        let along = (a.distance * a.distance - b.distance * b.distance + baseline * baseline) / (2 * baseline)
        let halfChord2 = a.distance * a.distance - along * along
        let across = halfChord2 > 0 ? halfChord2.squareRoot() : abs(baseline - a.distance - b.distance) / 2
        let model = (sigma(a.distance) * sigma(b.distance)) / (sigma(a.distance) + sigma(b.distance)) * 2
        return Fix(position: p, accuracy: max((across * across + model * model).squareRoot(), minimumSigma))
    }

    /// Least squares from the weighted centroid and from two seeds off it across the
    /// receivers' narrowest direction: receivers in a line (a corridor, a shelf row) leave a
    /// saddle on that line that a single seed on it would never leave.
    static func solveMany(_ ranges: [Range]) -> Fix {
        let center = weightedCentroid(ranges)!
        let across = narrowestDirection(ranges.map(\.position))
        let offset = max(1, ranges.map(\.distance).min() ?? 1)
        let seeds = [
            center, Point(x: center.x + across.x * offset, y: center.y + across.y * offset),
            Point(x: center.x - across.x * offset, y: center.y - across.y * offset),
        ]
        let weights = ranges.map { 1 / (sigma($0.distance) * sigma($0.distance)) }
        var best: (fix: Fix, cost: Double)?
        for seed in seeds {
            let fix = descend(from: seed, ranges, weights)
            let c = cost(fix.position, ranges, weights)
            if best == nil || c < best!.cost - 1e-12 { best = (fix, c) }
        }
        // Iteratively reweighted: a range far off the others' consensus (a receiver behind a
        // wall or a reflection) loses weight by the Cauchy rule instead of pulling the fix.
        var fix = best!.fix
        for _ in 0..<3 {
            let robust = ranges.enumerated().map { i, r -> Double in
                let dx = fix.position.x - r.position.x
                let dy = fix.position.y - r.position.y
                let u = ((dx * dx + dy * dy).squareRoot() - r.distance) / (cauchyScale * sigma(r.distance))
                return weights[i] / (1 + u * u)
            }
            fix = descend(from: fix.position, ranges, robust)
        }
        return fix
    }

    /// The unit vector along which the points spread least (the minor axis of their scatter).
    static func narrowestDirection(_ points: [Point]) -> Point {
        let mx = points.map(\.x).reduce(0, +) / Double(points.count)
        let my = points.map(\.y).reduce(0, +) / Double(points.count)
        var sxx = 0.0
        var sxy = 0.0
        var syy = 0.0
        for p in points {
            sxx += (p.x - mx) * (p.x - mx)
            sxy += (p.x - mx) * (p.y - my)
            syy += (p.y - my) * (p.y - my)
        }
        // Angle of the major axis; the minor axis is perpendicular to it.
        let angle = 0.5 * atan2(2 * sxy, sxx - syy)
        return Point(x: -sin(angle), y: cos(angle))
    }

    static func descend(from seed: Point, _ ranges: [Range], _ weights: [Double]) -> Fix {
        var p = seed
        var lambda = 1e-3
        var cost = cost(p, ranges, weights)
        var normal = (a: 0.0, b: 0.0, c: 0.0)
        for _ in 0..<30 {
            // Normal equations J'WJ δ = -J'Wr for r_i = |p - a_i| - d_i.
            var a = 0.0
            var b = 0.0
            var c = 0.0
            var gx = 0.0
            var gy = 0.0
            for (i, r) in ranges.enumerated() {
                let dx = p.x - r.position.x
                let dy = p.y - r.position.y
                let norm = max((dx * dx + dy * dy).squareRoot(), 1e-6)
                let jx = dx / norm
                let jy = dy / norm
                let residual = norm - r.distance
                let w = weights[i]
                a += w * jx * jx
                b += w * jx * jy
                c += w * jy * jy
                gx += w * jx * residual
                gy += w * jy * residual
            }
            normal = (a, b, c)
            var improved = false
            for _ in 0..<8 {
                let a2 = a * (1 + lambda) + 1e-9
                let c2 = c * (1 + lambda) + 1e-9
                let det = a2 * c2 - b * b
                guard abs(det) > 1e-18 else { break }
                let stepX = -(c2 * gx - b * gy) / det
                let stepY = -(-b * gx + a2 * gy) / det
                let candidate = Point(x: p.x + stepX, y: p.y + stepY)
                let newCost = Multilateration.cost(candidate, ranges, weights)
                if newCost < cost {
                    let moved = (stepX * stepX + stepY * stepY).squareRoot()
                    p = candidate
                    cost = newCost
                    lambda = max(lambda / 10, 1e-9)
                    improved = true
                    if moved < 1e-6 { return fix(p, ranges, weights, normal) }
                    break
                }
                lambda *= 10
            }
            if !improved { break }
        }
        return fix(p, ranges, weights, normal)
    }

    static func cost(_ p: Point, _ ranges: [Range], _ weights: [Double]) -> Double {
        var total = 0.0
        for (i, r) in ranges.enumerated() {
            let dx = p.x - r.position.x
            let dy = p.y - r.position.y
            let residual = (dx * dx + dy * dy).squareRoot() - r.distance
            total += weights[i] * residual * residual
        }
        return total
    }

    /// The fix with its 1-σ radius: sqrt(trace((J'WJ)⁻¹)) scaled up when the residuals are
    /// larger than the range model expects (reduced χ² > 1); collinear receivers, which
    /// leave one direction undetermined, are capped at the largest range.
    static func fix(_ p: Point, _ ranges: [Range], _ weights: [Double], _ n: (a: Double, b: Double, c: Double))
        -> Fix
    {
        let det = n.a * n.c - n.b * n.b
        let largest = ranges.map(\.distance).max() ?? 0
        var radius = largest
        if det > 1e-12 {
            let trace = (n.a + n.c) / det
            let dof = Double(max(ranges.count - 2, 1))
            let chi2 = cost(p, ranges, weights) / dof
            radius = min((trace * max(chi2, 1)).squareRoot(), max(largest, minimumSigma))
        }
        return Fix(position: p, accuracy: max(radius, minimumSigma))
    }
}
