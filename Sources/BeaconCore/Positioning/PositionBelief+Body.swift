#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A tag carried by a walking person is heard weaker by the receivers behind them: the body
/// takes up to `positioning.body_loss_db`, scaled by the cosine of how far behind the
/// receiver is. Which way the carrier faces is unknown, so the walking half of the belief is
/// weighed by the average over four headings of how well each explains the readings.
///
/// Why only walking: a standing carrier faces one way for the whole pause, and a belief that
/// let each tick pick its own heading explained noise away (standing tags on the simulated
/// store 2.24 m against 2.15 m). Why four headings: eight gave the same errors at twice the
/// cost; the body's loss changes slowly with the angle.
extension PositionBelief {
    static let carrierHeadings = 4

    /// The log-likelihood per cell of a walking carrier, from the plain model's `residuals`
    /// (dB, per receiver heard and cell) and their `scales` (-1/(2 σ²)).
    static func carriedLogLikelihood(grid: PositionGrid, receivers: [Int], _ residuals: [[Float]], _ scales: [Float])
        -> [Float]
    {
        // A running log-sum-exp over the headings: the largest so far and the sum relative to it
        var largest = [Float](repeating: -.infinity, count: grid.count)
        var sum = [Float](repeating: 0, count: grid.count)
        var heading = [Float](repeating: 0, count: grid.count)
        for h in 0..<carrierHeadings {
            let angle = Double(h) * 2 * Double.pi / Double(carrierHeadings)
            let (fx, fy) = (Float(cos(angle)), Float(sin(angle)))
            for k in 0..<grid.count { heading[k] = 0 }
            for (i, r) in receivers.enumerated() {
                let (tx, ty) = grid.towards[r]
                let residual = residuals[i]
                let scale = scales[i]
                for k in 0..<grid.count {
                    // Heard this much weaker than in the open: the body's share is explained
                    let behind = max(0, -(tx[k] * fx + ty[k] * fy))
                    let e = residual[k] + grid.bodyLoss * behind
                    heading[k] += scale * e * e
                }
            }
            for k in 0..<grid.count {
                if heading[k] > largest[k] {
                    sum[k] = sum[k] * exp(largest[k] - heading[k]) + 1
                    largest[k] = heading[k]
                } else {
                    sum[k] += exp(heading[k] - largest[k])
                }
            }
        }
        let headings = Float(carrierHeadings)
        return (0..<grid.count).map { largest[$0] + log(sum[$0] / headings) }
    }
}
