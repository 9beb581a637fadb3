import Testing

@testable import BeaconCore

#if canImport(Glibc)
    import Glibc
#endif

/// The Bayes locator on explicit geometry: a 10 × 10 m room with a receiver in each corner
/// and the floor's outline, noise-free readings, an explicit clock.
@Suite struct PositionBeliefTests {
    static let t0 = Timestamp.seconds(2_000_000)
    static let room = [Point(x: 0, y: 0), Point(x: 10, y: 0), Point(x: 10, y: 10), Point(x: 0, y: 10)]

    static func tracker(
        floor: [Point]? = room, estimator: PositioningSettings.Estimator = .bayes, maxReceivers: Int = 5,
        motion: PositioningSettings.Motion = .continuous, bodyLoss: Double = 0
    ) -> AssetTracker {
        var positioning = PositioningSettings()
        positioning.maxReceivers = maxReceivers
        positioning.publishInterval = .seconds(1)
        positioning.minMove = 0
        positioning.maxSpeed = 100
        positioning.floor = floor
        positioning.estimator = estimator
        positioning.motion = motion
        positioning.bodyLossDB = bodyLoss
        let site = SiteConfiguration(
            receivers: AssetTrackerTests.corners,
            assets: [AssetDefinition(id: "cart", tag: .address("AA:00:00:00:00:01"))],
            zones: [], alarms: [], positioning: positioning)
        return AssetTracker(
            site: site, calibrations: AssetTrackerTests.calibrations, lostAfter: .seconds(30), start: t0)
    }

    /// Walks the tracker through `seconds` of readings at the positions `path` gives.
    static func run(_ tracker: inout AssetTracker, seconds: Range<Int>, path: (Int) -> Point) -> AssetFix? {
        var last: AssetFix?
        for s in seconds {
            for e in AssetTrackerTests.step(&tracker, at: path(s), time: t0 + .seconds(Int64(s))) {
                if case let .assetPosition(f) = e.payload { last = f }
            }
        }
        return last
    }

    static func distance(_ a: Point, _ b: Point) -> Double {
        ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
    }

    @Test func theEstimatorIsBayesWithAFloorAndLeastSquaresWithout() {
        #expect(Self.tracker().grid != nil)
        #expect(Self.tracker(floor: nil).grid == nil, "no outline, no cells")
        #expect(Self.tracker(estimator: .leastSquares).grid == nil)
    }

    @Test func aStandingTagIsFoundAndItsAccuracyCoversIt() throws {
        var tracker = Self.tracker()
        let truth = Point(x: 2, y: 3)
        let fix = try #require(Self.run(&tracker, seconds: 0..<20) { _ in truth })
        let error = Self.distance(fix.position, truth)
        // Whole-dBm readings, and a model that keeps 3 dB of doubt per receiver per tick
        #expect(error < 0.8, "at \(fix.position.x), \(fix.position.y)")
        #expect(fix.accuracy >= error && fix.accuracy < 2, "accuracy \(fix.accuracy) m")
    }

    @Test func aWalkingTagIsFollowedAcrossTheRoom() throws {
        var tracker = Self.tracker()
        // 10 s at (2, 5), then 1 m/s to (8, 5), then 5 s there
        let fix = try #require(
            Self.run(&tracker, seconds: 0..<21) { s in Point(x: s < 10 ? 2 : Double(min(s - 8, 8)), y: 5) })
        #expect(Self.distance(fix.position, Point(x: 8, y: 5)) < 1.0, "at \(fix.position.x), \(fix.position.y)")
    }

    @Test func theBeliefStaysOnTheFloor() throws {
        // An L-shaped floor: the top-right quarter is not part of it
        let floor = [
            Point(x: 0, y: 0), Point(x: 10, y: 0), Point(x: 10, y: 5), Point(x: 5, y: 5), Point(x: 5, y: 10),
            Point(x: 0, y: 10),
        ]
        var tracker = Self.tracker(floor: floor)
        // Readings from the missing quarter: the belief must put nothing there
        _ = Self.run(&tracker, seconds: 0..<10) { _ in Point(x: 8, y: 8) }
        let grid = try #require(tracker.grid)
        let belief = try #require(tracker.states[0].belief)
        let outline = Polygon(floor)
        var offFloor = 0.0
        var total = 0.0
        for k in 0..<grid.count {
            total += Double(belief.probability(k))
            if !outline.contains(grid.center(k)) { offFloor += Double(belief.probability(k)) }
        }
        #expect(offFloor == 0 && abs(total - 1) < 1e-3)
    }

    @Test func thePacketNoiseIsLearnedFromTheSpreadWithinATick() {
        let grid = PositionGrid(
            receivers: AssetTrackerTests.corners, calibrations: [nil, nil, nil, nil], floor: Polygon(Self.room),
            tagHeight: nil)
        var belief = PositionBelief(grid: grid)
        let start = belief.packetVariance
        // Packets of -60 and -62 dBm, many ticks: sample variance 1.33 dB²
        for _ in 0..<200 { belief.learnPacketVariance(sum: -60 * 2 - 62 * 2, squares: 3600 * 2 + 3844 * 2, count: 4) }
        #expect(start == 49 && abs(belief.packetVariance - 4.0 / 3.0) < 0.01)
    }

    @Test func theSameReadingsGiveTheSameBelief() {
        var a = Self.tracker()
        var b = Self.tracker()
        let pa = Self.run(&a, seconds: 0..<8) { s in Point(x: 1 + Double(s) * 0.5, y: 2) }
        let pb = Self.run(&b, seconds: 0..<8) { s in Point(x: 1 + Double(s) * 0.5, y: 2) }
        #expect(pa == pb)
    }

    @Test func onlyTheStrongestMaxReceiversAreWeighed() {
        // c and d report a tag far from them (-95 dBm) that is really at (2, 3); a and b are right
        func run(maxReceivers: Int) -> AssetFix? {
            var tracker = Self.tracker(maxReceivers: maxReceivers)
            var fix: AssetFix?
            for s in 0..<15 {
                let t = Self.t0 + .seconds(Int64(s))
                for k in 0..<5 {
                    let at = t - .milliseconds(200 * Int64(k))
                    for r in AssetTrackerTests.corners {
                        let rssi =
                            ["a", "b"].contains(r.id) ? AssetTrackerTests.rssi(at: Point(x: 2, y: 3), from: r) : -95
                        tracker.observe(asset: 0, receiver: r.id, rssi: rssi, frameRSSIAt1m: nil, at: at)
                    }
                }
                var events: [Event] = []
                tracker.tick(at: t, events: &events)
                for e in events { if case let .assetPosition(f) = e.payload { fix = f } }
            }
            return fix
        }
        let two = run(maxReceivers: 2)
        let four = run(maxReceivers: 4)
        #expect(two?.receivers == ["a", "b"])
        let errorTwo = two.map { Self.distance($0.position, Point(x: 2, y: 3)) } ?? .infinity
        let errorFour = four.map { Self.distance($0.position, Point(x: 2, y: 3)) } ?? .infinity
        #expect(errorTwo < 1 && errorFour > errorTwo + 1, "two: \(errorTwo) m, four: \(errorFour) m")
    }

    /// Every receiver hears the tag at `p` five times before `t`, all five off by the same
    /// error of up to ±`noise` dB (shadowing that holds for a second), drawn from a fixed
    /// pseudo-random sequence.
    static func shadowedStep(
        _ tracker: inout AssetTracker, at p: Point, time t: Timestamp, noise: Int, seed: inout UInt64
    ) {
        var offsets: [String: Int] = [:]
        for r in AssetTrackerTests.corners {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            offsets[r.id] = Int(seed >> 33) % (2 * noise + 1) - noise
        }
        for k in stride(from: 4, through: 0, by: -1) {
            for r in AssetTrackerTests.corners {
                tracker.observe(
                    asset: 0, receiver: r.id, rssi: AssetTrackerTests.rssi(at: p, from: r) + offsets[r.id]!,
                    frameRSSIAt1m: nil, at: t - .milliseconds(200 * Int64(k)))
            }
        }
        var events: [Event] = []
        tracker.tick(at: t, events: &events)
    }

    @Test func aStopAndGoBeliefKnowsWhenTheTagWalks() throws {
        var tracker = Self.tracker(motion: .stopAndGo)
        // 30 s standing at (2, 5), then walking at 1 m/s towards (8, 5)
        _ = Self.run(&tracker, seconds: 0..<30) { _ in Point(x: 2, y: 5) }
        let standing = try #require(tracker.states[0].belief).walkingProbability
        _ = Self.run(&tracker, seconds: 30..<35) { s in Point(x: 2 + Double(s - 29), y: 5) }
        let walking = try #require(tracker.states[0].belief).walkingProbability
        #expect(standing < 0.1 && walking > 0.5, "standing \(standing), walking \(walking)")
    }

    @Test func aStandingTagIsSteadierWhenTheSiteSaysTagsStopAndGo() {
        // The same noisy readings of a tag standing at (3, 4) for a minute: the stop-and-go
        // belief averages the whole pause, the continuous one only the last few seconds.
        func meanError(_ motion: PositioningSettings.Motion) -> Double {
            var tracker = Self.tracker(motion: motion)
            var seed: UInt64 = 42
            var errors: [Double] = []
            let truth = Point(x: 3, y: 4)
            for s in 0..<60 {
                Self.shadowedStep(&tracker, at: truth, time: Self.t0 + .seconds(Int64(s)), noise: 5, seed: &seed)
                if s >= 20, let fix = tracker.fixes.first?.fix { errors.append(Self.distance(fix.position, truth)) }
            }
            return errors.reduce(0, +) / Double(max(errors.count, 1))
        }
        let stopAndGo = meanError(.stopAndGo)
        let continuous = meanError(.continuous)
        #expect(stopAndGo < 0.8 * continuous, "stop and go \(stopAndGo) m, continuous \(continuous) m")
    }

    @Test func theLastingErrorFollowsTheReceiversGeometry() {
        let grid = PositionGrid(
            receivers: AssetTrackerTests.corners, calibrations: [nil, nil, nil, nil], floor: Polygon(Self.room),
            tagHeight: nil)
        // At the centre each receiver is √50 m away along a diagonal, its RSSI changing by
        // slope = 20/ln 10/√50 dB per metre; four at right angles inform each axis with 2·slope²
        // per dB², so the RMS error is √(2 / (2·slope²)) = 1/slope metres per dB.
        let slope = 20 / log(10.0) / 50.0.squareRoot()
        let exact = 1 / slope
        let centre = grid.persistentError(at: Point(x: 5, y: 5), receivers: [0, 1, 2, 3], sigma: 1)
        #expect(abs(centre - exact) < 1e-9, "\(centre) m against \(exact) m")
        // Twice the dB, twice the metres; two receivers on one side, worse
        #expect(abs(grid.persistentError(at: Point(x: 5, y: 5), receivers: [0, 1, 2, 3], sigma: 2) - 2 * exact) < 1e-9)
        #expect(grid.persistentError(at: Point(x: 5, y: 9), receivers: [0, 1], sigma: 1) > 2 * centre)
        // One receiver cannot place a tag at all: the whole floor
        #expect(grid.persistentError(at: Point(x: 5, y: 5), receivers: [0], sigma: 1) >= 10)
    }

    @Test func thePersistentNoiseIsLearnedAndKeptInTheAccuracy() throws {
        // Noise-free readings: the learned persistent noise falls to its 2 dB floor; readings off
        // by up to ±5 dB per receiver per second (10 dB²) raise it above the 3 dB it starts at.
        func standing(noise: Int) -> (variance: Double, accuracy: Double) {
            var tracker = Self.tracker(motion: .stopAndGo)
            var seed: UInt64 = 7
            for s in 0..<120 {
                Self.shadowedStep(
                    &tracker, at: Point(x: 5, y: 5), time: Self.t0 + .seconds(Int64(s)), noise: noise, seed: &seed)
            }
            return (tracker.states[0].belief?.persistentVariance ?? 0, tracker.fixes.first?.fix?.accuracy ?? 0)
        }
        let quiet = standing(noise: 0)
        let noisy = standing(noise: 5)
        #expect(quiet.variance == 4 && noisy.variance > 9, "learned \(quiet.variance), \(noisy.variance) dB²")
        // Two minutes of averaging do not make the accuracy better than half the learned
        // deviation allows at that spot
        let grid = try #require(Self.tracker().grid)
        let bound = grid.persistentError(at: Point(x: 5, y: 5), receivers: [0, 1, 2, 3], sigma: 0.5 * 9.0.squareRoot())
        #expect(noisy.accuracy >= bound && noisy.accuracy > quiet.accuracy, "\(noisy.accuracy) m, \(quiet.accuracy) m")
    }

    @Test func aDriftingBlurMovesTheMassByTheDrift() {
        let grid = PositionGrid(
            receivers: AssetTrackerTests.corners, calibrations: [nil, nil, nil, nil], floor: Polygon(Self.room),
            tagHeight: nil)
        var p = [Float](repeating: 0, count: grid.count)
        let start = grid.cell(containing: Point(x: 3, y: 5))
        p[start] = 1
        func mean(_ q: [Float]) -> Point {
            let total = q.reduce(0, +)
            var (x, y) = (0.0, 0.0)
            for k in q.indices {
                x += Double(q[k] / total) * grid.center(k).x
                y += Double(q[k] / total) * grid.center(k).y
            }
            return Point(x: x, y: y)
        }
        let still = mean(PositionBelief.blur(p, grid: grid, sigma: 1))
        let moved = mean(PositionBelief.blur(p, grid: grid, sigma: 1, drift: (x: 4, y: -2)))
        #expect(Self.distance(still, grid.center(start)) < 1e-3)
        #expect(
            abs(moved.x - still.x - 4 * grid.cell) < 1e-3 && abs(moved.y - still.y + 2 * grid.cell) < 1e-3,
            "moved to \(moved.x), \(moved.y) from \(still.x), \(still.y)")
    }

    @Test func aWalkingTagsVelocityIsFollowed() throws {
        var tracker = Self.tracker(motion: .stopAndGo)
        // 20 s at (1, 5), then 1 m/s along x
        _ = Self.run(&tracker, seconds: 0..<28) { s in Point(x: s < 20 ? 1 : 1 + Double(s - 19), y: 5) }
        let walking = try #require(tracker.states[0].belief).velocity
        #expect(walking.x > 0.5 && walking.x <= 1.5 && abs(walking.y) < 0.2, "\(walking)")
        // It stops at (9, 5): the velocity dies away
        _ = Self.run(&tracker, seconds: 28..<48) { _ in Point(x: 9, y: 5) }
        let stopped = try #require(tracker.states[0].belief).velocity
        #expect(abs(stopped.x) < 0.1 && abs(stopped.y) < 0.1, "\(stopped)")
    }

    @Test func aCarriersBodyIsAllowedForWhenTheSiteGivesIt() {
        // A person walks east at 1 m/s along y = 4, the tag on their chest: receivers behind
        // them (west) hear it up to 6 dB weaker. Without the body in the model the fix is
        // pushed ahead of them, away from the weak receivers; with it, it stays with them.
        func meanError(bodyLoss: Double) -> Double {
            var tracker = Self.tracker(motion: .stopAndGo, bodyLoss: bodyLoss)
            var errors: [Double] = []
            for s in 0..<8 {
                let t = Self.t0 + .seconds(Int64(s))
                for k in stride(from: 4, through: 0, by: -1) {
                    let at = Point(x: 1 + Double(s) - 0.2 * Double(k), y: 4)
                    for r in AssetTrackerTests.corners {
                        let bearing = atan2(r.position.y - at.y, r.position.x - at.x)
                        let body = 6 * max(0, -cos(bearing))  // facing east: heading 0
                        let rssi = AssetTrackerTests.rssi(at: at, from: r) - Int(body.rounded())
                        tracker.observe(
                            asset: 0, receiver: r.id, rssi: rssi, frameRSSIAt1m: nil,
                            at: t - .milliseconds(200 * Int64(k)))
                    }
                }
                var events: [Event] = []
                tracker.tick(at: t, events: &events)
                if s >= 3, let fix = tracker.fixes.first?.fix {
                    errors.append(Self.distance(fix.position, Point(x: 1 + Double(s), y: 4)))
                }
            }
            return errors.reduce(0, +) / Double(max(errors.count, 1))
        }
        let modelled = meanError(bodyLoss: 6)
        let ignored = meanError(bodyLoss: 0)
        #expect(modelled < 0.8 * ignored, "with the body \(modelled) m, without \(ignored) m")
    }
}
