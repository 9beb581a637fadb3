import BeaconCore
import Foundation
import TestSupport
import Testing

@testable import Storage

/// An alert's CloudEvent is written once (`StateStore.oneBodyMigration`, issue 54): the
/// history and every webhook's outbox read the same row, which goes with the last of them.
@Suite struct OneBodyTests {
    static func event(_ n: Int) -> StateStore.StoredEvent {
        .init(id: "E\(n)", type: "beacond.zone.enter", time: .seconds(Int64(n)), body: "{\"id\":\"E\(n)\",\"n\":\(n)}")
    }

    static func count(_ store: StateStore, _ sql: String) throws -> Int64 {
        try SQLiteConnection(path: store.path).scalarInt64(sql) ?? -1
    }

    @Test func aBodyForTwoWebhooksIsWrittenOnceAndReadByAll() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        try store.append([Self.event(1), Self.event(2)]) { _ in ["crm", "wms"] }
        #expect(try Self.count(store, "SELECT COUNT(*) FROM event_body") == 2)
        #expect(try Self.count(store, "SELECT COUNT(*) FROM outbox WHERE body <> '' OR body_seq IS NULL") == 0)
        #expect(try Self.count(store, "SELECT COUNT(*) FROM event WHERE body <> ''") == 0)
        for webhook in ["crm", "wms"] {
            #expect(try store.pending(webhook: webhook, limit: 10).map(\.body) == [1, 2].map { Self.event($0).body })
        }
        #expect(try store.events().map(\.body) == [1, 2].map { Self.event($0).body })
        #expect(try store.ownEntries(excluding: []).map(\.body) == [1, 2].map { Self.event($0).body })
    }

    @Test func theBodyGoesWithTheLastThatHoldsIt() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        try store.append([Self.event(1), Self.event(2)]) { _ in ["crm", "wms"] }
        // The history lets E1 go while both webhooks wait: they still send it.
        try store.removeEvents(["E1"])
        #expect(try store.pending(webhook: "crm", limit: 10).first?.body == Self.event(1).body)
        try store.delivered(webhook: "crm", through: store.pending(webhook: "crm", limit: 1)[0].seq)
        #expect(try store.pending(webhook: "wms", limit: 10).first?.body == Self.event(1).body)
        #expect(try Self.count(store, "SELECT COUNT(*) FROM event_body") == 2)
        try store.delivered(webhook: "wms", through: store.pending(webhook: "wms", limit: 1)[0].seq)
        #expect(try Self.count(store, "SELECT COUNT(*) FROM event_body") == 1, "E1's body went with its last entry")
        // Delivered everywhere while the history keeps it: the body stays for the history.
        let last = try store.pending(webhook: "crm", limit: 10).last!.seq
        try store.delivered(webhook: "crm", through: last)
        try store.delivered(webhook: "wms", through: try store.pending(webhook: "wms", limit: 10).last!.seq)
        #expect(try store.events().map(\.body) == [Self.event(2).body])
        try store.removeAllEvents()
        #expect(try Self.count(store, "SELECT COUNT(*) FROM event_body") == 0)
        // Dead letters take a copy of the body they keep.
        try store.append([Self.event(3)], at: .seconds(1)) { _ in ["crm"] }
        try store.retire(webhook: "crm", at: .seconds(2))
        #expect(
            try SQLiteConnection(path: store.path).scalarString("SELECT body FROM dead_letter") == Self.event(3).body)
    }

    /// Rows written before the body table carry their own bodies, and are read as they are.
    @Test func rowsFromBeforeKeepTheirOwnBodies() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        let file = try SQLiteConnection(path: store.path)
        try file.execute(
            "INSERT INTO event (id, type, time_ns, body) VALUES ('E0', 'beacond.zone.enter', 0, '{\"old\":0}')")
        try file.execute(
            "INSERT INTO outbox (webhook, event_id, type, body, enqueued_ns) VALUES ('crm', 'E0', 'beacond.zone.enter', '{\"old\":0}', 0)"
        )
        try store.append([Self.event(1)]) { _ in ["crm"] }
        #expect(try store.events().map(\.body) == ["{\"old\":0}", Self.event(1).body])
        #expect(try store.pending(webhook: "crm", limit: 10).map(\.body) == ["{\"old\":0}", Self.event(1).body])
        try store.takeDecision(
            ownID: "E0", id: "L0", body: "{\"id\":\"L0\"}", time: .seconds(3), decider: "gw1", enqueuedAt: .seconds(2))
        #expect(try store.pending(webhook: "crm", limit: 10).first?.body == "{\"id\":\"L0\"}")
        #expect(try store.events().first?.body == "{\"id\":\"L0\"}")
    }

    /// A site's hand-over renames an alert (SPEC §6.3): the body all entries share becomes the
    /// decider's; where the history already holds the decider's id, the entries read that row.
    @Test func aDecisionTakenRewritesTheSharedBodyOnce() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        try store.append([Self.event(1)]) { _ in ["crm", "wms"] }
        try store.takeDecision(
            ownID: "E1", id: "L1", body: "{\"id\":\"L1\"}", time: .seconds(7), decider: "gw1", enqueuedAt: .seconds(5))
        for webhook in ["crm", "wms"] {
            #expect(try store.pending(webhook: webhook, limit: 10).map(\.body) == ["{\"id\":\"L1\"}"])
        }
        #expect(try store.events().map(\.body) == ["{\"id\":\"L1\"}"])
        #expect(try Self.count(store, "SELECT COUNT(*) FROM event_body") == 1)

        // A second copy of the same decision: its entries point at the history's row, its
        // own row and body go.
        try store.append([Self.event(2)]) { _ in ["crm"] }
        try store.takeDecision(
            ownID: "E2", id: "L1", body: "{\"id\":\"L1\"}", time: .seconds(7), decider: "gw1", enqueuedAt: .seconds(5))
        #expect(try store.events().map(\.id) == ["L1"])
        #expect(try store.pending(webhook: "crm", limit: 10).map(\.body) == ["{\"id\":\"L1\"}", "{\"id\":\"L1\"}"])
        #expect(try Self.count(store, "SELECT COUNT(*) FROM event_body") == 1)
        try store.delivered(webhook: "crm", through: try store.pending(webhook: "crm", limit: 10).last!.seq)
        #expect(try store.pending(webhook: "wms", limit: 10).map(\.body) == ["{\"id\":\"L1\"}"])
        try store.removeAllEvents()
        #expect(try store.pending(webhook: "wms", limit: 10).map(\.body) == ["{\"id\":\"L1\"}"])
        try store.delivered(webhook: "wms", through: try store.pending(webhook: "wms", limit: 10).last!.seq)
        #expect(try Self.count(store, "SELECT COUNT(*) FROM event_body") == 0)
    }
}
