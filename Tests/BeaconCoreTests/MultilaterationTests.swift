import Testing

@testable import BeaconCore

/// The position solver on exact geometry and on the degenerate cases.
@Suite struct MultilaterationTests {
    func ranges(_ receivers: [Point], to p: Point) -> [Multilateration.Range] {
        receivers.map { r in
            Multilateration.Range(
                position: r, distance: ((r.x - p.x) * (r.x - p.x) + (r.y - p.y) * (r.y - p.y)).squareRoot())
        }
    }

    func distance(_ a: Point, _ b: Point) -> Double {
        ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
    }

    @Test func noiseFreeRangesRecoverThePointToTheCentimetre() throws {
        let corners = [Point(x: 0, y: 0), Point(x: 30, y: 0), Point(x: 30, y: 20), Point(x: 0, y: 20)]
        for truth in [Point(x: 3.2, y: 6.7), Point(x: 15, y: 10), Point(x: 29, y: 1), Point(x: 0.5, y: 19.5)] {
            let fix = try #require(Multilateration.solve(ranges(corners, to: truth)))
            #expect(distance(fix.position, truth) < 0.01, "\(truth) -> \(fix.position)")
        }
        // Three receivers, an outside point
        let three = [Point(x: 0, y: 0), Point(x: 6, y: 0), Point(x: 3, y: 4)]
        let fix = try #require(Multilateration.solve(ranges(three, to: Point(x: 7, y: 5))))
        #expect(distance(fix.position, Point(x: 7, y: 5)) < 0.01)
    }

    @Test func oneReceiverGivesItsPositionWithTheRangeAsAccuracy() throws {
        let fix = try #require(Multilateration.solve([.init(position: Point(x: 2, y: 3), distance: 4.5)]))
        #expect(fix.position == Point(x: 2, y: 3) && fix.accuracy == 4.5)
        #expect(Multilateration.solve([]) == nil, "nothing in range: no fix")
    }

    @Test func twoReceiversSplitTheBaselineAndAdmitTheAmbiguity() throws {
        let fix = try #require(
            Multilateration.solve([
                .init(position: Point(x: 0, y: 0), distance: 3), .init(position: Point(x: 10, y: 0), distance: 7),
            ]))
        #expect(abs(fix.position.x - 3) < 1e-9 && abs(fix.position.y) < 1e-9)
        // Circles of 5 m and 5 m around points 6 m apart meet 4 m off the baseline
        let wide = try #require(
            Multilateration.solve([
                .init(position: Point(x: 0, y: 0), distance: 5), .init(position: Point(x: 6, y: 0), distance: 5),
            ]))
        #expect(wide.position == Point(x: 3, y: 0) && wide.accuracy >= 4)
    }

    @Test func collinearReceiversGiveAFiniteFixWithAWideAccuracy() throws {
        let line = [Point(x: 0, y: 0), Point(x: 5, y: 0), Point(x: 10, y: 0)]
        let truth = Point(x: 4, y: 3)
        let fix = try #require(Multilateration.solve(ranges(line, to: truth)))
        #expect(fix.position.x.isFinite && fix.position.y.isFinite && fix.accuracy.isFinite)
        // Either side of the line is as good; the along-line coordinate is right
        #expect(abs(fix.position.x - 4) < 0.05 && (abs(abs(fix.position.y) - 3) < 0.05 || fix.accuracy >= 3))
    }

    @Test func inconsistentRangesWidenTheAccuracy() throws {
        let corners = [Point(x: 0, y: 0), Point(x: 10, y: 0), Point(x: 10, y: 10), Point(x: 0, y: 10)]
        let exact = try #require(Multilateration.solve(ranges(corners, to: Point(x: 5, y: 5))))
        var noisy = ranges(corners, to: Point(x: 5, y: 5))
        noisy[0].distance *= 2.5
        let bad = try #require(Multilateration.solve(noisy))
        #expect(bad.accuracy > exact.accuracy)
    }
}

/// Zone outlines: concave shapes, edges and vertices.
@Suite struct PolygonTests {
    // An L: the notch (2...4, 2...4) is outside
    let l = Polygon([
        Point(x: 0, y: 0), Point(x: 4, y: 0), Point(x: 4, y: 2), Point(x: 2, y: 2), Point(x: 2, y: 4),
        Point(x: 0, y: 4),
    ])

    @Test func concaveOutlines() {
        #expect(l.contains(Point(x: 1, y: 1)) && l.contains(Point(x: 3, y: 1)) && l.contains(Point(x: 1, y: 3)))
        #expect(!l.contains(Point(x: 3, y: 3)), "the notch")
        #expect(!l.contains(Point(x: 5, y: 1)) && !l.contains(Point(x: -0.1, y: 2)))
    }

    @Test func edgesAndVerticesCountAsInside() {
        #expect(l.contains(Point(x: 2, y: 0)) && l.contains(Point(x: 3, y: 2)) && l.contains(Point(x: 2, y: 3)))
        #expect(l.contains(Point(x: 4, y: 0)) && l.contains(Point(x: 2, y: 2)))
    }

    @Test func signedDistanceAndDepth() {
        #expect(abs(l.signedDistance(Point(x: 1, y: 1)) - 1) < 1e-12)
        #expect(abs(l.signedDistance(Point(x: 3, y: 3)) + 1) < 1e-12)
        #expect(abs(l.signedDistance(Point(x: 6, y: 1)) + 2) < 1e-12)
        #expect(abs(l.depth - 1) < 0.2)
    }
}
