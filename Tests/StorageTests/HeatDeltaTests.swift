import BeaconCore
import Foundation
import TestSupport
import Testing

@testable import Storage

/// Issue 53: the heat of the hour under way is appended as deltas of the cells that changed,
/// not the hour's whole map rewritten every 30 s; an hour that ended is folded into one row per
/// level at the next hour's first add. Reads see both, the same sums either way.
@Suite struct HeatDeltaTests {
    static let hour = Timestamp.seconds(1_763_805_600)

    static func heat(_ cells: [(Int, Int, Double)], level: Int = 0) -> HeatMap {
        var map = HeatMap()
        for (x, y, s) in cells { map.add(cell: .init(level: level, x: x, y: y), seconds: s) }
        return map
    }

    static func rows(_ store: StateStore, _ table: String) throws -> Int {
        try store.db.read { (db) throws(SQLiteError) in Int(try db.scalarInt64("SELECT COUNT(*) FROM \(table)") ?? 0) }
    }

    @Test func deltasAreAppendedAndFoldedWhenTheHourEnds() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        try store.addHeat(Self.heat([(1, 1, 30), (2, 1, 10)]), hour: Self.hour)
        try store.addHeat(Self.heat([(1, 1, 30)]), hour: Self.hour)
        try store.addHeat(Self.heat([(5, 5, 4)], level: 1), hour: Self.hour)
        #expect(try Self.rows(store, "heat_delta") == 3 && Self.rows(store, "heat_hour") == 0)
        let within = try store.heat(level: nil, from: Self.hour, to: Self.hour + .hours(1))
        #expect(within == Self.heat([(1, 1, 60), (2, 1, 10)]).merged(with: Self.heat([(5, 5, 4)], level: 1)))
        #expect(
            try store.heat(level: 1, from: Self.hour, to: Self.hour + .hours(1)) == Self.heat([(5, 5, 4)], level: 1))

        // The next hour's first add folds the ended hour: one row per level, the same sums.
        let next = Self.hour + .hours(1)
        try store.addHeat(Self.heat([(1, 1, 5)]), hour: next)
        #expect(try Self.rows(store, "heat_delta") == 1 && Self.rows(store, "heat_hour") == 2)
        #expect(try store.heat(level: nil, from: Self.hour, to: next) == within)
        #expect(
            try store.heat(level: 0, from: Self.hour, to: next + .hours(1))
                == Self.heat([(1, 1, 65), (2, 1, 10)]))
    }
}

extension HeatMap {
    func merged(with other: HeatMap) -> HeatMap {
        var map = self
        map.merge(other)
        return map
    }
}
