import Foundation
import Testing

@testable import BeaconCore

/// Issue 64: the belief is blurred only where its mass is (`PositionBelief.window`). The cells
/// outside the window's reach would have been blurred to no more than `negligible`, which the
/// update turns into the floor anyway; inside it the blur is the whole floor's.
@Suite struct BeliefWindowTests {
    static let floor = [Point(x: 0, y: 0), Point(x: 30, y: 0), Point(x: 30, y: 20), Point(x: 0, y: 20)]

    @Test func theWindowedBlurIsTheWholeBlurWhereTheMassIs() throws {
        let grid = PositionGrid(
            receivers: AssetTrackerTests.corners, calibrations: [nil, nil, nil, nil], floor: Polygon(Self.floor),
            tagHeight: nil)
        // A tag's mass within 2 m of (8, 6), the floor's elsewhere
        var p = [Float](repeating: PositionBelief.floorMass, count: grid.count)
        for k in 0..<grid.count {
            let c = grid.center(k)
            let d2 = (c.x - 8) * (c.x - 8) + (c.y - 6) * (c.y - 6)
            if d2 < 4 { p[k] = Float(0.05 * exp(-d2)) }
        }
        let window = try #require(PositionBelief.window(of: p, grid: grid))
        #expect(window.x.count < grid.nx / 3 && window.y.count < grid.ny / 3, "\(window) of \(grid.nx) x \(grid.ny)")
        let whole = PositionBelief.blur(p, grid: grid, sigma: 2.2, drift: (x: 0.5, y: 0))
        let windowed = PositionBelief.blur(p, grid: grid, sigma: 2.2, drift: (x: 0.5, y: 0), within: window)
        var inside = 0
        for k in 0..<grid.count {
            if windowed[k] != 0 {
                inside += 1
                // What the window leaves out is the floor's mass: no more than the floor apart
                #expect(abs(windowed[k] - whole[k]) <= max(1e-5 * whole[k], PositionBelief.floorMass), "cell \(k)")
            } else {
                #expect(whole[k] <= PositionBelief.negligible, "cell \(k) left out holds \(whole[k])")
            }
        }
        #expect(inside > 0 && inside < grid.count / 2, "\(inside) of \(grid.count) blurred")
        // Nothing above the floor: nothing to blur
        #expect(
            PositionBelief.window(of: [Float](repeating: PositionBelief.floorMass, count: grid.count), grid: grid)
                == nil)
    }
}
