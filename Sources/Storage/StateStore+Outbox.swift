import BeaconCore
import GRDB

/// The webhook outbox: every event a webhook wants waits here, in order, until the webhook
/// answers 2xx (SPEC §4.2: at-least-once, in order per webhook). Rows older than the
/// webhook's `max_age` move to the dead letters, which `beaconctl outbox` shows.
extension StateStore {
    public struct OutboxEntry: Sendable, Equatable {
        public var seq: Int64
        public var eventID: String
        public var type: String
        public var body: String
        public var enqueuedAt: Timestamp
    }

    /// How much waits for one webhook.
    public struct OutboxDepth: Sendable, Equatable {
        public var webhook: String
        public var pending: Int
        public var oldest: Timestamp?
        public var deadLetters: Int
    }

    public struct DeadLetter: Sendable, Equatable {
        public var webhook: String
        public var eventID: String
        public var type: String
        public var enqueuedAt: Timestamp
        public var diedAt: Timestamp
        public var reason: String
    }

    /// The oldest entries waiting for a webhook, at most `limit`.
    public func pending(webhook: String, limit: Int) throws -> [OutboxEntry] {
        try db.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM outbox WHERE webhook = ? ORDER BY seq LIMIT ?", arguments: [webhook, limit]
            ).map {
                OutboxEntry(
                    seq: $0["seq"], eventID: $0["event_id"], type: $0["type"], body: $0["body"],
                    enqueuedAt: Timestamp(nanoseconds: $0["enqueued_ns"]))
            }
        }
    }

    /// Removes what a webhook acknowledged: its entries up to and including `seq`.
    public func delivered(webhook: String, through seq: Int64) throws {
        try db.write { db in
            try db.execute(sql: "DELETE FROM outbox WHERE webhook = ? AND seq <= ?", arguments: [webhook, seq])
        }
    }

    /// Moves a webhook's entries enqueued before `cutoff` to the dead letters; returns how many.
    @discardableResult
    public func expire(webhook: String, enqueuedBefore cutoff: Timestamp, at now: Timestamp, reason: String) throws
        -> Int
    {
        try db.write { db in
            try db.execute(
                sql: """
                    INSERT INTO dead_letter (webhook, event_id, type, body, enqueued_ns, dead_ns, reason)
                    SELECT webhook, event_id, type, body, enqueued_ns, ?, ? FROM outbox
                    WHERE webhook = ? AND enqueued_ns < ? ORDER BY seq
                    """, arguments: [now.nanoseconds, reason, webhook, cutoff.nanoseconds])
            try db.execute(
                sql: "DELETE FROM outbox WHERE webhook = ? AND enqueued_ns < ?",
                arguments: [webhook, cutoff.nanoseconds])
            return db.changesCount
        }
    }

    /// Pending and dead counts for every webhook that has either.
    public func outboxDepths() throws -> [OutboxDepth] {
        try db.read { db in
            var depths: [String: OutboxDepth] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT webhook, COUNT(*) AS n, MIN(enqueued_ns) AS oldest FROM outbox GROUP BY webhook")
            {
                let id: String = row["webhook"]
                let oldest: Int64? = row["oldest"]
                depths[id] = OutboxDepth(
                    webhook: id, pending: row["n"], oldest: oldest.map(Timestamp.init(nanoseconds:)), deadLetters: 0)
            }
            for row in try Row.fetchAll(db, sql: "SELECT webhook, COUNT(*) AS n FROM dead_letter GROUP BY webhook") {
                let id: String = row["webhook"]
                depths[id, default: OutboxDepth(webhook: id, pending: 0, oldest: nil, deadLetters: 0)].deadLetters =
                    row["n"]
            }
            return depths.values.sorted { $0.webhook < $1.webhook }
        }
    }

    /// The newest dead letters first.
    public func deadLetters(limit: Int = 100) throws -> [DeadLetter] {
        try db.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM dead_letter ORDER BY seq DESC LIMIT ?", arguments: [limit]).map {
                DeadLetter(
                    webhook: $0["webhook"], eventID: $0["event_id"], type: $0["type"],
                    enqueuedAt: Timestamp(nanoseconds: $0["enqueued_ns"]),
                    diedAt: Timestamp(nanoseconds: $0["dead_ns"]), reason: $0["reason"])
            }
        }
    }

    /// Marks a webhook disabled (410 Gone) for its current URL; nil re-enables it. A
    /// disabled webhook stays disabled across restarts until its URL changes.
    public func setDisabled(webhook: String, url: String, reason: String?, at now: Timestamp) throws {
        try db.write { db in
            try db.execute(
                sql:
                    "INSERT OR REPLACE INTO webhook_state (webhook, url, disabled_reason, disabled_ns) VALUES (?, ?, ?, ?)",
                arguments: [webhook, url, reason, reason == nil ? nil : now.nanoseconds])
        }
    }

    /// Why a webhook is disabled for this URL, or nil.
    public func disabledReason(webhook: String, url: String) throws -> String? {
        try db.read { db in
            try String.fetchOne(
                db, sql: "SELECT disabled_reason FROM webhook_state WHERE webhook = ? AND url = ?",
                arguments: [webhook, url])
        }
    }
}
