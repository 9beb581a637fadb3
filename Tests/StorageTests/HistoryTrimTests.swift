import BeaconCore
import Foundation
import TestSupport
import Testing

@testable import Storage

/// The history's limits lowered under a long history (a reload), or a clock stepped far
/// forward: the excess goes a bounded chunk per commit, so the engine's commit that follows
/// does not stall its turns, and the history ends within its limits.
@Suite struct HistoryTrimTests {
    static let start = Timestamp.seconds(1_763_769_600)

    static func events(_ range: Range<Int>, type: String = "beacond.asset.position", every: TimeSpan = .seconds(1))
        -> [StateStore.StoredEvent]
    {
        range.map {
            .init(
                id: "E\(100_000 + $0)", type: type, time: start + TimeSpan(nanoseconds: every.nanoseconds * Int64($0)),
                body: "{}")
        }
    }

    static func store(keeping: Int, for age: TimeSpan) throws -> StateStore {
        try StateStore(
            directory: try Executables.temporaryDirectory().path,
            retention: HistoryRetention(
                alerts: .init(maxAge: age, maxEvents: keeping), telemetry: .init(maxAge: age, maxEvents: keeping)))
    }

    @Test func aLoweredLimitIsReachedAChunkPerCommit() throws {
        let store = try Self.store(keeping: 10_000, for: .hours(24))
        try store.commit(Self.events(0..<5_000))
        store.setRetention(
            HistoryRetention(
                alerts: .init(maxAge: .hours(24), maxEvents: 10_000),
                telemetry: .init(maxAge: .hours(24), maxEvents: 100)))
        var held: [Int] = []
        for n in 5_000..<5_003 {
            try store.commit(Self.events(n..<n + 1))
            held.append(try store.events(limit: 10_000).count)
        }
        #expect(StateStore.trimChunk == 2_000)
        #expect(held == [3_001, 1_002, 100])
        #expect(try store.events(limit: 1).first?.id == "E104903", "the newest 100 kept")
    }

    /// A clock stepped forward past every event's age: the old go a chunk per commit as well,
    /// and alerts are trimmed apart from telemetry.
    @Test func eventsPastTheirAgeGoAChunkPerCommitInEachClass() throws {
        let store = try Self.store(keeping: 100_000, for: .hours(1))
        try store.commit(Self.events(0..<2_500, every: .milliseconds(1)))
        try store.commit(Self.events(2_500..<5_000, type: "beacond.zone.enter", every: .milliseconds(1)))
        let later = StateStore.StoredEvent(
            id: "E900000", type: "beacond.zone.exit", time: Self.start + .hours(5), body: "{}")
        try store.commit([later])
        #expect(try store.events(limit: 10_000).count == 500 + 500 + 1)
        try store.commit([
            StateStore.StoredEvent(id: "E900001", type: "beacond.zone.exit", time: later.time, body: "{}")
        ])
        #expect(try store.events(limit: 10_000).map(\.id) == ["E900000", "E900001"])
    }
}
