/// Weighted linear least squares through the normal equations `AᵀWA·x = AᵀW·b`, for the
/// small systems calibration solves (a few unknowns per receiver): rows are added one at a
/// time as sparse (column, coefficient) lists, and the square system is solved by Gaussian
/// elimination with partial pivoting.
struct NormalEquations {
    private var ata: [[Double]]
    private var atb: [Double]

    init(unknowns: Int) {
        ata = Array(repeating: Array(repeating: 0, count: unknowns), count: unknowns)
        atb = Array(repeating: 0, count: unknowns)
    }

    /// One observation: `Σ coefficient·x[column] = value`, with its weight.
    mutating func add(_ row: [(Int, Double)], _ value: Double, weight: Double = 1) {
        for (i, a) in row {
            atb[i] += weight * a * value
            for (j, b) in row { ata[i][j] += weight * a * b }
        }
    }

    /// The least-squares solution; nil when the system is singular (an unknown no row names).
    func solve() -> [Double]? {
        var m = ata
        var v = atb
        let n = v.count
        for c in 0..<n {
            var pivot = c
            for r in c + 1..<n where abs(m[r][c]) > abs(m[pivot][c]) { pivot = r }
            guard abs(m[pivot][c]) > 1e-12 else { return nil }
            m.swapAt(c, pivot)
            v.swapAt(c, pivot)
            for r in c + 1..<n {
                let f = m[r][c] / m[c][c]
                guard f != 0 else { continue }
                for k in c..<n { m[r][k] -= f * m[c][k] }
                v[r] -= f * v[c]
            }
        }
        var x = Array(repeating: 0.0, count: n)
        for r in stride(from: n - 1, through: 0, by: -1) {
            var sum = v[r]
            for k in r + 1..<n { sum -= m[r][k] * x[k] }
            x[r] = sum / m[r][r]
        }
        return x
    }
}
