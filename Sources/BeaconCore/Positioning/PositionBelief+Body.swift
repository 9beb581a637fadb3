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
    /// Only `cells` are weighed (those with walking mass above `negligible`); the others get
    /// `elsewhere`'s.
    static func carriedLogLikelihood(
        grid: PositionGrid, receivers: [Int], _ residuals: [[Float]], _ scales: [Float], cells: [Int],
        elsewhere: [Float]
    ) -> [Float] {
        // A running log-sum-exp over the headings, per cell weighed: the largest so far and
        // the sum relative to it
        var largest = [Float](repeating: -.infinity, count: cells.count)
        var sum = [Float](repeating: 0, count: cells.count)
        var heading = [Float](repeating: 0, count: cells.count)
        for h in 0..<carrierHeadings {
            let angle = Double(h) * 2 * Double.pi / Double(carrierHeadings)
            let (fx, fy) = (Float(cos(angle)), Float(sin(angle)))
            for n in cells.indices { heading[n] = 0 }
            for (i, r) in receivers.enumerated() {
                let (tx, ty) = grid.towards[r]
                let residual = residuals[i]
                let scale = scales[i]
                for (n, k) in cells.enumerated() {
                    // Heard this much weaker than in the open: the body's share is explained
                    let behind = max(0, -(tx[k] * fx + ty[k] * fy))
                    let e = residual[k] + grid.bodyLoss * behind
                    heading[n] += scale * e * e
                }
            }
            for n in cells.indices {
                if heading[n] > largest[n] {
                    sum[n] = sum[n] * exp(largest[n] - heading[n]) + 1
                    largest[n] = heading[n]
                } else {
                    sum[n] += exp(heading[n] - largest[n])
                }
            }
        }
        let headings = Float(carrierHeadings)
        var out = elsewhere
        for (n, k) in cells.enumerated() { out[k] = largest[n] + log(sum[n] / headings) }
        return out
    }
}
