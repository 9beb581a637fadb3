import BeaconConfig
import BeaconCore
import Simulation

#if canImport(Glibc)
    import Glibc
#endif

/// The zone rule's ceiling on a trace: the alerts that beacond's rule (a zone changes once
/// the estimate is the margin, `zone_hysteresis` / 2, past its edge) gives when it is fed the
/// true position, or the truth plus an error of a chosen size that holds for a few seconds,
/// as a standing tag's estimate does (an AR(1) per axis with a 5 s time constant).
///
/// Why: the zone target (99 % recall and precision) is scored against every true crossing,
/// including a tag that stops a few centimetres past a room's edge. Whether a better locator
/// could reach it, or the rule and the trace forbid it whatever the locator, is told by what
/// a locator of a known error scores on the same crossings.
struct ZoneCeiling {
    /// Per-axis error (metres) of each imagined locator; 0 is the truth itself.
    let sigmas: [Double]
    let zones: [(id: String, outline: Polygon, margin: Double)]
    let rho: Double = exp(-1.0 / 5)
    /// Per locator, per asset: its current error.
    var errors: [[String: (Double, Double)]]
    /// Per locator, per "asset/zone": inside or not.
    var inside: [[String: Bool]]
    var alerts: [[ZoneAlert]]
    var times: [[Timestamp]]
    var random = SeededRandom(seed: 11)

    init(config: Config, sigmas: [Double]) {
        self.sigmas = sigmas
        let watched = Set(
            config.siteModel.alarms.filter { $0.on.contains(.enter) || $0.on.contains(.exit) }.flatMap(\.zones))
        zones = config.siteModel.zones.compactMap { z in
            guard watched.contains(z.id), case let .polygon(_, points) = z.shape else { return nil }
            let outline = Polygon(points)
            return (z.id, outline, min(config.positioning.zoneHysteresis / 2, outline.depth / 2))
        }
        errors = Array(repeating: [:], count: sigmas.count)
        inside = Array(repeating: [:], count: sigmas.count)
        alerts = Array(repeating: [], count: sigmas.count)
        times = Array(repeating: [], count: sigmas.count)
    }

    /// A new trace: every asset outside every zone, as the tracker starts.
    mutating func restart() {
        errors = errors.map { _ in [:] }
        inside = inside.map { _ in [:] }
    }

    /// One tick of every locator at `t`, from the true positions.
    mutating func tick(at t: Timestamp, truth: [String: Point]) {
        let keep = (1 - rho * rho).squareRoot()
        for (k, sigma) in sigmas.enumerated() {
            for (asset, p) in truth.sorted(by: { $0.key < $1.key }) {
                var (ex, ey) = errors[k][asset] ?? (sigma * random.gaussian(), sigma * random.gaussian())
                ex = rho * ex + keep * sigma * random.gaussian()
                ey = rho * ey + keep * sigma * random.gaussian()
                errors[k][asset] = (ex, ey)
                let estimate = Point(x: p.x + ex, y: p.y + ey)
                for zone in zones {
                    let key = "\(asset)/\(zone.id)"
                    let depth = zone.outline.signedDistance(estimate)
                    let was = inside[k][key] ?? false
                    guard was ? depth < -zone.margin : depth > zone.margin else { continue }
                    inside[k][key] = !was
                    alerts[k].append(
                        ZoneAlert(
                            alarm: "ceiling", asset: asset, zone: zone.id, condition: was ? .exit : .enter,
                            position: estimate, level: 0))
                    times[k].append(t)
                }
            }
        }
    }

    /// One line per locator, scored as beacond's alerts are.
    func report(truth: [SiteSimulator.TruthTransition]) -> [String] {
        sigmas.indices.map { k in
            let score = zoneScore(
                alerts: alerts[k], alertTimes: times[k], alertDepths: alerts[k].map { _ in .nan }, truth: truth,
                histogram: false)
            return sigmas[k] == 0 ? "the truth itself: \(score)" : "truth + \(f(sigmas[k])) m a side: \(score)"
        }
    }
}
