import BeaconCore
import Foundation
import TestSupport
import Testing

@testable import Storage

/// Issue 53 (SPEC §4.4): positions are kept in memory, not in the file, and the history's
/// readers see them merged with the stored events in publication order — paged without a
/// gap or a repeat, filtered like the rest — until a restart, which forgets them.
@Suite struct RecentPositionsTests {
    static let start = Timestamp.seconds(1_763_805_600)

    static func event(_ n: Int, _ kind: String) -> StateStore.StoredEvent {
        let id = String(repeating: "0", count: 6 - String(n).count) + String(n)
        return .init(id: id, type: "beacond." + kind, time: start + .seconds(Int64(n)), body: "{\"n\":\(n)}")
    }

    /// Events 1…30: every third an alert (stored), the rest positions (remembered).
    static func history() throws -> (StateStore, String) {
        let dir = try Executables.temporaryDirectory().path
        let store = try StateStore(directory: dir)
        for n in 1...30 {
            if n % 3 == 0 {
                try store.append([event(n, "zone.enter")], at: start)
            } else {
                store.remember([event(n, "asset.position")])
            }
        }
        return (store, dir)
    }

    @Test func theHistoryMergesStoredAlertsAndRememberedPositionsInOrder() throws {
        let (store, dir) = try Self.history()
        let all = (1...30).map { Self.event($0, "").id }
        #expect(try store.events().map(\.id) == all)
        #expect(try store.events(after: "000010").map(\.id) == Array(all[10...]))
        #expect(try store.events(after: "000011").map(\.id) == Array(all[11...]), "after a stored id too")
        #expect(
            try store.events(matching: EventTypeGlob(["asset.*"])).map(\.id)
                == all.enumerated().filter { ($0.offset + 1) % 3 != 0 }.map(\.element))
        #expect(
            try store.events(limit: 4, order: .init(newestFirst: true, before: "000020")).map(\.id)
                == ["000019", "000018", "000017", "000016"])
        #expect(
            try store.events(order: .init(since: Self.start + .seconds(28))).map(\.id) == [
                "000028", "000029", "000030",
            ])
        #expect(try store.newestEventID() == "000030")

        // Page by page, as the stream resumes: every event once, in order.
        var cursor: String?
        var paged: [String] = []
        while true {
            let page = try store.eventsPage(after: cursor, matching: nil, limit: 4, scanLimit: 2)
            paged += page.events.map(\.id)
            cursor = page.cursor
            if page.atEnd { break }
        }
        #expect(paged == all)

        // Not in the file: a restart forgets the positions and keeps the alerts.
        let reopened = try StateStore(directory: dir)
        #expect(try reopened.events().map(\.id) == all.enumerated().filter { ($0.offset + 1) % 3 == 0 }.map(\.element))
        try store.removeAllEvents()
        #expect(try store.events().isEmpty && store.recentCount == 0)
    }

    /// Bounded by the telemetry's age and by `RecentEvents.limit`, oldest first.
    @Test func thePositionsKeptAreBoundedByAgeAndCount() throws {
        var retention = HistoryRetention()
        retention.telemetry = .init(maxAge: .seconds(100), maxEvents: 1_000_000)
        let store = try StateStore(directory: try Executables.temporaryDirectory().path, retention: retention)
        store.remember(
            (1...RecentEvents.limit + 500).map { n in
                var e = Self.event(n, "asset.position")
                e.time = Self.start
                e.id = String(n + 1_000_000)
                return e
            })
        #expect(store.recentCount == RecentEvents.limit)
        #expect(try store.events(limit: 1).first?.id == String(1_000_501), "the oldest went")
        var late = Self.event(1, "asset.position")
        (late.id, late.time) = ("2000000", Self.start + .seconds(101))
        store.remember([late])
        #expect(try store.events().map(\.id) == ["2000000"], "older than the age went")
    }
}
