#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The belief's blur, on the cells where its mass is.
///
/// Why a window: `update` keeps every cell at `floorMass` at least, so a cell whose walking
/// mass the blur would leave at or below that floor ends the tick on the floor whatever the
/// blur gives it. Only the cells within the blur's reach of mass above the floor need it —
/// on a settled belief a few metres around the tag, not the floor's 2,000 cells (issue 64).
extension PositionBelief {
    /// The least mass a cell keeps after an update (before it is normalised).
    static let floorMass: Float = 1e-9
    /// Mass below this in a cell is taken to be the floor's: not blurred, not weighed by a
    /// carrier's body, set to the floor by the update. (A millionth of the belief: the tag is
    /// not there, and the floor keeps the cell possible should the readings say it is.)
    static let negligible: Float = 1e-6

    /// The cells (columns and rows, inclusive) holding every cell with more than
    /// `floorMass`; nil when none has.
    static func window(of p: [Float], grid: PositionGrid) -> (x: ClosedRange<Int>, y: ClosedRange<Int>)? {
        var (x0, x1, y0, y1) = (Int.max, -1, Int.max, -1)
        for j in 0..<grid.ny {
            let base = j * grid.nx
            for i in 0..<grid.nx where p[base + i] > negligible {
                (x0, x1, y0, y1) = (min(x0, i), max(x1, i), min(y0, j), max(y1, j))
            }
        }
        return x1 < 0 ? nil : (x0...x1, y0...y1)
    }

    /// A separable Gaussian blur (σ in cells) whose centre moves by `drift` cells, that keeps
    /// mass inside the grid.
    /// Within `window` (grown by the blur's reach) when given; its cells outside are left at 0.
    static func blur(
        _ p: [Float], grid: PositionGrid, sigma: Double, drift: (x: Double, y: Double) = (0, 0),
        within window: (x: ClosedRange<Int>, y: ClosedRange<Int>)? = (0...Int.max, 0...Int.max)
    ) -> [Float] {
        guard let window else { return p }
        // A long silence blurs across the whole floor, not further.
        let reach = 3 * sigma + max(abs(drift.x), abs(drift.y))
        let radius = max(1, min(Int(reach.rounded(.up)), max(grid.nx, grid.ny)))
        // Cell i gathers from i + o: mass moving by +drift comes from o = -drift.
        func kernel(_ shift: Double) -> [Float] {
            (-radius...radius).map { o in Float(exp(-(Double(o) + shift) * (Double(o) + shift) / (2 * sigma * sigma))) }
        }
        let kernelX = kernel(drift.x)
        let kernelY = kernel(drift.y)
        let xs = max(0, window.x.lowerBound - radius)...min(grid.nx - 1, min(window.x.upperBound, grid.nx) + radius)
        let ys = max(0, window.y.lowerBound - radius)...min(grid.ny - 1, min(window.y.upperBound, grid.ny) + radius)
        var rows = [Float](repeating: 0, count: p.count)
        for j in ys {
            let base = j * grid.nx
            for i in xs {
                var acc: Float = 0
                var weight: Float = 0
                for o in max(-radius, -i)...min(radius, grid.nx - 1 - i) {
                    let w = kernelX[o + radius]
                    acc += w * p[base + i + o]
                    weight += w
                }
                rows[base + i] = acc / weight
            }
        }
        var out = [Float](repeating: 0, count: p.count)
        for j in ys {
            for i in xs {
                var acc: Float = 0
                var weight: Float = 0
                for o in max(-radius, -j)...min(radius, grid.ny - 1 - j) {
                    let w = kernelY[o + radius]
                    acc += w * rows[(j + o) * grid.nx + i]
                    weight += w
                }
                out[j * grid.nx + i] = acc / weight
            }
        }
        return out
    }
}
