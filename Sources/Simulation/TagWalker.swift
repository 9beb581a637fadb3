import BeaconConfig
import BeaconCore

#if canImport(Glibc)
    import Glibc
#endif

/// How one simulated tag moves: it stands still for a while, then walks in a straight line
/// at a walking pace to a new destination — inside a zone or anywhere on the floor — and so
/// on. Its heading (for body attenuation) follows the walk and turns at random when it stops.
struct TagWalker: Sendable {
    var position: Point
    var heading: Double
    var destination: Point?
    var speed = 1.0
    var pausedUntil: Timestamp
    /// Carried by someone whose body shadows it (false: put down, `stands_at`).
    var carried = true

    init(position: Point, heading: Double, pausedUntil: Timestamp) {
        self.position = position
        self.heading = heading
        self.pausedUntil = pausedUntil
    }

    /// Moves the tag to time `t` (from `t - dt`).
    mutating func advance(
        to t: Timestamp, dt: Double, settings: SimulationSettings, zones: [Polygon], random: inout SeededRandom
    ) {
        if let target = destination {
            let dx = target.x - position.x
            let dy = target.y - position.y
            let remaining = (dx * dx + dy * dy).squareRoot()
            let step = speed * dt
            if remaining <= step {
                position = target
                destination = nil
                let pause = settings.pause
                let seconds =
                    pause.lowerBound.seconds + random.uniform() * (pause.upperBound.seconds - pause.lowerBound.seconds)
                pausedUntil = t + .milliseconds(Int64(seconds * 1000))
                heading = random.uniform() * 2 * Double.pi
            } else {
                position = Point(x: position.x + dx / remaining * step, y: position.y + dy / remaining * step)
                heading = atan2(dy, dx)
            }
        } else if t >= pausedUntil {
            // A tag put down and picked up is carried from then on.
            carried = true
            destination = Self.pickDestination(settings: settings, zones: zones, random: &random)
            let s = settings.walkingSpeed
            speed = s.lowerBound + random.uniform() * (s.upperBound - s.lowerBound)
        }
    }

    static func pickDestination(settings: SimulationSettings, zones: [Polygon], random: inout SeededRandom) -> Point {
        if !zones.isEmpty, random.uniform() < settings.zoneVisits {
            let zone = zones[Int(random.uniform() * Double(zones.count))]
            let xs = zone.points.map(\.x)
            let ys = zone.points.map(\.y)
            // Well inside: a destination at least 0.5 m from the edge when the zone allows it
            for _ in 0..<100 {
                let p = Point(
                    x: xs.min()! + random.uniform() * (xs.max()! - xs.min()!),
                    y: ys.min()! + random.uniform() * (ys.max()! - ys.min()!))
                if zone.signedDistance(p) >= min(0.5, zone.depth / 2) { return clamp(p, settings) }
            }
        }
        return Point(x: random.uniform() * settings.width, y: random.uniform() * settings.depth)
    }

    static func clamp(_ p: Point, _ s: SimulationSettings) -> Point {
        Point(x: min(max(p.x, 0), s.width), y: min(max(p.y, 0), s.depth))
    }
}
