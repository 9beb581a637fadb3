import BeaconCore
import GRDB

extension StateStore {
    /// A published event: its id, type, time and CloudEvent JSON text.
    public struct StoredEvent: Sendable, Equatable {
        public var id: String
        public var type: String
        public var time: Timestamp
        public var body: String

        public init(id: String, type: String, time: Timestamp, body: String) {
            self.id = id
            self.type = type
            self.time = time
            self.body = body
        }
    }

    /// Appends events to the history and, for each, an outbox row per webhook that wants it,
    /// in one transaction; trims the history to `historyLimit`. Once this returns, the events
    /// survive a crash and will be delivered.
    ///
    /// - Parameter webhooks: the ids of the webhooks each event goes to.
    public func append(
        _ events: [StoredEvent], at now: Timestamp = Timestamp(nanoseconds: 0),
        webhooks: (StoredEvent) -> [String] = { _ in [] }
    ) throws {
        guard !events.isEmpty else { return }
        try db.write { db in
            let insertEvent = try db.makeStatement(
                sql: "INSERT OR IGNORE INTO event (id, type, time_ns, body) VALUES (?, ?, ?, ?)")
            let insertOutbox = try db.makeStatement(
                sql: "INSERT INTO outbox (webhook, event_id, type, body, enqueued_ns) VALUES (?, ?, ?, ?, ?)")
            for e in events {
                try insertEvent.execute(arguments: [e.id, e.type, e.time.nanoseconds, e.body])
                for webhook in webhooks(e) {
                    try insertOutbox.execute(arguments: [webhook, e.id, e.type, e.body, now.nanoseconds])
                }
            }
            try db.execute(
                sql: "DELETE FROM event WHERE seq <= (SELECT MAX(seq) FROM event) - ?", arguments: [historyLimit])
        }
    }

    /// The history after an id (from the oldest kept when nil), oldest first, optionally only
    /// the types a glob matches. An id no longer in the history (trimmed, or from another
    /// gateway) is compared as a string: ids sort in publication order.
    public func events(after id: String? = nil, matching glob: EventTypeGlob? = nil, limit: Int = 1000) throws
        -> [StoredEvent]
    {
        try db.read { db in
            var sql = "SELECT * FROM event"
            var arguments: StatementArguments = []
            if let id {
                let seq = try Int64.fetchOne(db, sql: "SELECT seq FROM event WHERE id = ?", arguments: [id])
                if let seq {
                    sql += " WHERE seq > ?"
                    arguments += [seq]
                } else {
                    sql += " WHERE id > ?"
                    arguments += [id]
                }
            }
            sql += " ORDER BY seq"
            var out: [StoredEvent] = []
            let cursor = try Row.fetchCursor(db, sql: sql, arguments: arguments)
            while out.count < limit, let row = try cursor.next() {
                let type: String = row["type"]
                if let glob, !glob.matches(type: type) { continue }
                out.append(
                    StoredEvent(
                        id: row["id"], type: type, time: Timestamp(nanoseconds: row["time_ns"]), body: row["body"]))
            }
            return out
        }
    }

    /// The id of the newest event in the history.
    public func newestEventID() throws -> String? {
        try db.read { try String.fetchOne($0, sql: "SELECT id FROM event ORDER BY seq DESC LIMIT 1") }
    }
}
