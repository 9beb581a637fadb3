import BeaconConfig
import BeaconCore
import Simulation

#if canImport(Glibc)
    import Glibc
#endif

/// A locator for standing tags that is told by the ground truth when each tag stopped: it
/// averages every packet each receiver heard since (RSSI in dB, as the path-loss model is),
/// and takes the point of the floor whose expected RSSI fits those means best (least squares,
/// a 0.5 m search then 0.05 m around the best).
///
/// Why: to tell what the simulated channel allows from what beacond's locator leaves on the
/// table. No real locator knows when a pause began, and with independent noise of equal
/// variance per receiver this fit is the maximum-likelihood one, so its error on standing
/// tags is about the least any locator can reach on the same packets. beacond's error on
/// standing tags is printed beside it.
struct PauseOracle {
    struct Sums {
        var sum = 0.0
        var count = 0
    }

    let receivers: [String: (position: Point, dz: Double, rssiAt1m: Double, exponent: Double)]
    let width: Double
    let depth: Double
    let channel: SimulationSettings
    /// Per asset: where it stands (nil while it walks) and its packets since it stopped.
    var standing: [String: Point] = [:]
    var heard: [String: [String: Sums]] = [:]

    init(config: Config, settings: SimulationSettings) {
        var receivers: [String: (Point, Double, Double, Double)] = [:]
        for r in config.siteModel.receivers {
            let c = config.engineConfiguration.receivers[r.id]
            let dz = (r.z ?? 0) - (config.positioning.tagHeight ?? r.z ?? 0)
            receivers[r.id] = (
                r.position, dz, c?.rssiAt1m ?? AssetTracker.defaultRSSIAt1m, c?.pathLossExponent ?? 2
            )
        }
        self.receivers = receivers
        width = settings.width
        depth = settings.depth
        channel = settings
    }

    /// The true positions of a simulator step: a tag that moved starts a new pause.
    mutating func move(_ truth: [SiteSimulator.TruthPosition]) {
        for p in truth where standing[p.asset].map({ error($0, p.position) > 1e-9 }) ?? true {
            standing[p.asset] = p.position
            heard[p.asset] = [:]
        }
    }

    mutating func observe(asset: String, receiver: String, rssi: Int) {
        heard[asset, default: [:]][receiver, default: Sums()].sum += Double(rssi)
        heard[asset, default: [:]][receiver, default: Sums()].count += 1
    }

    /// The best fit for `asset` from its packets since it stopped, when three receivers heard it.
    func estimate(asset: String) -> Point? {
        let means = (heard[asset] ?? [:]).compactMap { id, s -> (Point, Double, Double, Double, Double)? in
            guard s.count > 0, let r = receivers[id] else { return nil }
            return (r.position, r.dz, r.rssiAt1m, r.exponent, s.sum / Double(s.count))
        }
        guard means.count >= 3 else { return nil }
        func cost(_ p: Point) -> Double {
            var c = 0.0
            for (at, dz, rssiAt1m, n, mean) in means {
                let d = max((pow(p.x - at.x, 2) + pow(p.y - at.y, 2) + dz * dz).squareRoot(), 0.1)
                let e = mean - (rssiAt1m - 10 * n * log10(d))
                c += e * e
            }
            return c
        }
        func search(_ lo: Point, _ hi: Point, step: Double) -> Point {
            var best = (cost: Double.infinity, at: lo)
            var y = lo.y
            while y <= hi.y + 1e-9 {
                var x = lo.x
                while x <= hi.x + 1e-9 {
                    let p = Point(x: x, y: y)
                    let c = cost(p)
                    if c < best.cost { best = (c, p) }
                    x += step
                }
                y += step
            }
            return best.at
        }
        let coarse = search(Point(x: 0, y: 0), Point(x: width, y: depth), step: 0.5)
        return search(
            Point(x: max(coarse.x - 0.5, 0), y: max(coarse.y - 0.5, 0)),
            Point(x: min(coarse.x + 0.5, width), y: min(coarse.y + 0.5, depth)), step: 0.05)
    }

    /// The Cramér–Rao bound of the same fit: the covariance (m², xx, xy, yy) no unbiased
    /// locator can beat at `truth` from the pause's packets, with the simulator's own channel —
    /// shadowing that decorrelates over `shadowing_time` (an AR(1) over the packets heard,
    /// as `SiteSimulator.updatedShadowing` draws it), Rayleigh fading (31 dB² per packet in
    /// dB), rounding to whole dB — and without a body's loss, which only adds to it.
    func bound(asset: String, at truth: Point, step: Double) -> (xx: Double, xy: Double, yy: Double)? {
        var j = (xx: 0.0, xy: 0.0, yy: 0.0)
        var heardBy = 0
        let rho = exp(-step / channel.shadowingTime.seconds)
        let fading = channel.fastFading ? pow(10 / log(10.0), 2) * Double.pi * Double.pi / 6 : 0
        for (id, s) in heard[asset] ?? [:] {
            guard s.count > 0, let r = receivers[id] else { continue }
            heardBy += 1
            let n = Double(s.count)
            // The variance of the mean of n AR(1) values of unit variance
            let ar = (1 + rho) / (1 - rho) - 2 * rho * (1 - pow(rho, n)) / (n * (1 - rho) * (1 - rho))
            let variance =
                (channel.sigmaDB * channel.sigmaDB * ar + fading + 1.0 / 12
                    + channel.noiseDB * channel.noiseDB) / n
            let (dx, dy) = (truth.x - r.position.x, truth.y - r.position.y)
            let d2 = max(dx * dx + dy * dy + r.dz * r.dz, 0.01)
            let k = 10 * r.exponent / log(10.0) / d2
            let (gx, gy) = (k * dx, k * dy)
            j.xx += gx * gx / variance
            j.xy += gx * gy / variance
            j.yy += gy * gy / variance
        }
        let det = j.xx * j.yy - j.xy * j.xy
        guard heardBy >= 3, det > 0 else { return nil }
        return (j.yy / det, -j.xy / det, j.xx / det)
    }
}

/// An error drawn from a bound's covariance: what an efficient locator's error would be.
func drawError(_ c: (xx: Double, xy: Double, yy: Double), _ random: inout SeededRandom) -> Double {
    let l11 = c.xx.squareRoot()
    let l21 = c.xy / max(l11, 1e-12)
    let l22 = max(c.yy - l21 * l21, 0).squareRoot()
    let (u, v) = (random.gaussian(), random.gaussian())
    let (ex, ey) = (l11 * u, l21 * u + l22 * v)
    return (ex * ex + ey * ey).squareRoot()
}
