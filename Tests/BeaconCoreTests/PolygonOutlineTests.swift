import Testing

@testable import BeaconCore

/// The outline checks the configuration refuses zones and floors by (`Polygon+Outline`).
@Suite struct PolygonOutlineTests {
    static func polygon(_ xy: [(Double, Double)]) -> Polygon { Polygon(xy.map { Point(x: $0.0, y: $0.1) }) }

    @Test func simpleOutlinesHaveNoCrossing() {
        let square = Self.polygon([(0, 0), (4, 0), (4, 3), (0, 3)])
        #expect(square.firstCrossing() == nil && square.area == 12)
        let clockwiseL = Self.polygon([(0, 0), (0, 4), (1, 4), (1, 1), (4, 1), (4, 0)])
        #expect(clockwiseL.firstCrossing() == nil && clockwiseL.area == 7)
        // A notch whose corner touches nothing else, and a triangle (never crosses itself).
        #expect(Self.polygon([(0, 0), (4, 0), (4, 4), (2, 1), (0, 4)]).firstCrossing() == nil)
        #expect(Self.polygon([(0, 0), (1, 0), (0, 1)]).firstCrossing() == nil)
    }

    @Test func crossingsAreFoundWithTheirEdges() {
        let bowTie = Self.polygon([(0, 0), (4, 0), (0, 3), (4, 3)])
        #expect(bowTie.firstCrossing().map { [$0.0, $0.1] } == [1, 3])
        #expect(bowTie.area == 0, "its two triangles cancel")
        // A pentagram drawn in one stroke: edge 0 crosses edges 2 and 3.
        let star = Self.polygon([(0, 3), (2, -3), (-3, 1), (3, 1), (-2, -3)])
        #expect(star.firstCrossing().map { [$0.0, $0.1] } == [0, 2])
        // An outline that touches itself at a corner of a non-adjacent edge.
        let pinched = Self.polygon([(0, 0), (4, 0), (2, 2), (4, 4), (0, 4), (2, 2)])
        #expect(pinched.firstCrossing() != nil)
        // An edge that turns back along the one before.
        #expect(Self.polygon([(0, 0), (4, 0), (2, 0), (2, 3)]).firstCrossing().map { [$0.0, $0.1] } == [0, 1])
    }

    @Test func overlapsSeesCrossingEdgesAndContainment() {
        let floor = Self.polygon([(0, 0), (10, 0), (10, 10), (0, 10)])
        #expect(!floor.overlaps(Self.polygon([(20, 20), (25, 20), (25, 25)])))
        #expect(floor.overlaps(Self.polygon([(8, 8), (12, 8), (12, 12), (8, 12)])), "partly outside")
        #expect(floor.overlaps(Self.polygon([(2, 2), (3, 2), (3, 3)])), "inside")
        #expect(Self.polygon([(2, 2), (3, 2), (3, 3)]).overlaps(floor), "holding it")
        #expect(floor.overlaps(Self.polygon([(-1, 5), (11, 5), (11, 6), (-1, 6)])), "a band across, no corner inside")
        #expect(floor.overlaps(Self.polygon([(10, 0), (12, 0), (12, 2)])), "touching at a corner")
    }
}
