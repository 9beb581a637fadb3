#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The floor as a grid of cells, with what each receiver should hear from a tag in each
/// cell: the shared, read-only half of the Bayes locator. Cells are sized so that a floor
/// has at most `maxCells` of them (0.25 m on a flat, about 0.55 m on a 30 × 20 m store), which
/// bounds the cost per tag whatever the site's size. 2,000 cells gave the same errors as
/// 4,000 on every benchmark at half the cost; 1,000 began to lose on the recorded flat.
struct PositionGrid: Sendable {
    static let maxCells = 2000
    let origin: Point
    let cell: Double
    let nx: Int
    let ny: Int
    /// Cells inside the floor's outline.
    let onFloor: [Bool]
    /// Per receiver, per cell: the expected RSSI (dBm) from the path-loss model.
    let expected: [[Float]]
    /// How the site's tags move between ticks.
    let motion: MotionModel
    /// dB a carrier's body takes from a receiver right behind them (0: not modelled).
    let bodyLoss: Float
    /// Per receiver, per cell: the unit vector from the cell towards the receiver (only
    /// with a body loss), to tell which receivers a carrier facing some way has behind them.
    let towards: [(x: [Float], y: [Float])]
    /// Per receiver: where it is, its height above the tags and its path-loss exponent.
    let sources: [(position: Point, dz: Double, exponent: Double)]

    var count: Int { nx * ny }

    /// - Parameter floor: the floor's outline (`positioning.floor`); cells outside it are
    ///   never believed.
    init(
        receivers: [SiteReceiver], calibrations: [ReceiverCalibration?], floor: Polygon, tagHeight: Double?,
        motion: MotionModel = MotionModel(.continuous), bodyLoss: Double = 0
    ) {
        self.motion = motion
        self.bodyLoss = Float(bodyLoss)
        var lo = Point(x: .infinity, y: .infinity)
        var hi = Point(x: -.infinity, y: -.infinity)
        for p in floor.points {
            lo = Point(x: min(lo.x, p.x), y: min(lo.y, p.y))
            hi = Point(x: max(hi.x, p.x), y: max(hi.y, p.y))
        }
        let width = max(hi.x - lo.x, 1)
        let depth = max(hi.y - lo.y, 1)
        cell = max(0.25, (width * depth / Double(Self.maxCells)).squareRoot())
        nx = max(1, Int((width / cell).rounded(.up)))
        ny = max(1, Int((depth / cell).rounded(.up)))
        origin = lo
        var onFloor: [Bool] = []
        var centers: [Point] = []
        for j in 0..<ny {
            for i in 0..<nx {
                let c = Point(x: lo.x + (Double(i) + 0.5) * cell, y: lo.y + (Double(j) + 0.5) * cell)
                centers.append(c)
                onFloor.append(floor.contains(c))
            }
        }
        self.onFloor = onFloor
        sources = receivers.enumerated().map { r, receiver in
            (
                receiver.position, receiver.z.flatMap { z in tagHeight.map { z - $0 } } ?? 0,
                calibrations[r]?.pathLossExponent ?? 2.0
            )
        }
        towards =
            bodyLoss > 0
            ? receivers.map { receiver in
                let unit = centers.map { c -> (Float, Float) in
                    let dx = receiver.position.x - c.x
                    let dy = receiver.position.y - c.y
                    let d = max((dx * dx + dy * dy).squareRoot(), 1e-6)
                    return (Float(dx / d), Float(dy / d))
                }
                return (unit.map(\.0), unit.map(\.1))
            } : []
        expected = zip(sources, calibrations).map { source, calibration in
            let reference = calibration?.rssiAt1m ?? AssetTracker.defaultRSSIAt1m
            return centers.map { c in
                let dx = c.x - source.position.x
                let dy = c.y - source.position.y
                let d = max((dx * dx + dy * dy + source.dz * source.dz).squareRoot(), 0.25)
                return Float(reference - 10 * source.exponent * log10(d))
            }
        }
    }

    /// How far (RMS, m) `sigma` dB of error on each receiver `used` misplaces a tag at `p`:
    /// the Cramér–Rao bound of the path-loss model there, from the receivers' geometry (few
    /// receivers, all on one side, far away: large). Capped at the grid's extent.
    func persistentError(at p: Point, receivers used: [Int], sigma: Double) -> Double {
        var (jxx, jxy, jyy) = (0.0, 0.0, 0.0)
        for r in used {
            let s = sources[r]
            let dx = p.x - s.position.x
            let dy = p.y - s.position.y
            let d2 = max(dx * dx + dy * dy + s.dz * s.dz, 0.0625)
            // d(expected RSSI)/d(position), dB per metre
            let k = 10 * s.exponent / log(10.0) / d2
            let (gx, gy) = (k * dx, k * dy)
            jxx += gx * gx / (sigma * sigma)
            jxy += gx * gy / (sigma * sigma)
            jyy += gy * gy / (sigma * sigma)
        }
        let det = jxx * jyy - jxy * jxy
        let extent = Double(max(nx, ny)) * cell
        guard det > 1e-12 else { return extent }
        return min(((jxx + jyy) / det).squareRoot(), extent)
    }

    /// The mean position of a probability over the floor's cells, and its RMS radius.
    @inline(__always)
    func centre(_ probability: (Int) -> Double) -> (position: Point, spread: Double) {
        var (sx, sy, sxx) = (0.0, 0.0, 0.0)
        for k in 0..<count where onFloor[k] {
            let p = probability(k)
            let c = center(k)
            sx += p * c.x
            sy += p * c.y
            sxx += p * (c.x * c.x + c.y * c.y)
        }
        return (Point(x: sx, y: sy), max(sxx - sx * sx - sy * sy, 0).squareRoot())
    }

    /// The cell a point lies in (points off the grid: the nearest cell on its edge).
    func cell(containing p: Point) -> Int {
        let i = min(max(Int((p.x - origin.x) / cell), 0), nx - 1)
        let j = min(max(Int((p.y - origin.y) / cell), 0), ny - 1)
        return j * nx + i
    }

    func center(_ k: Int) -> Point {
        Point(x: origin.x + (Double(k % nx) + 0.5) * cell, y: origin.y + (Double(k / nx) + 0.5) * cell)
    }

    /// How much better than `place` the best other place (every `stride`-th cell each way)
    /// explains how each receiver's readings departed from their mean there (`d`, dB; `scale`,
    /// -1/(2 σ²) of it): the log-likelihood ratio a tag that moved raises and one that stands
    /// does not. Shadowing pushes each receiver its own way and few places explain that; a
    /// walk moves them together as the geometry says.
    func departureRatio(_ departures: [(receiver: Int, d: Float, scale: Float)], at place: Point, stride: Int) -> Double
    {
        let here = cell(containing: place)
        var stood: Float = 0
        for x in departures { stood += x.scale * x.d * x.d }
        var best = stood
        var j = 0
        while j < ny {
            var i = 0
            while i < nx {
                let k = j * nx + i
                i += stride
                guard onFloor[k] else { continue }
                var ll: Float = 0
                for x in departures {
                    let e = x.d - (expected[x.receiver][k] - expected[x.receiver][here])
                    ll += x.scale * e * e
                }
                best = max(best, ll)
            }
            j += stride
        }
        return Double(best - stood)
    }
}
