import BeaconCore
import Synchronization

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

        /// `seq` 0: not in the outbox (a position waiting in memory, `ConflatedPositions`).
        public init(seq: Int64, eventID: String, type: String, body: String, enqueuedAt: Timestamp) {
            (self.seq, self.eventID, self.type, self.body, self.enqueuedAt) = (seq, eventID, type, body, enqueuedAt)
        }

        /// Waits in the outbox (an alert), rather than in memory (a position).
        public var isStored: Bool { seq > 0 }

        /// The body this entry pointed at is gone: a damaged page of `event_body` that the
        /// emptying of the file could not carry (`recoverWhenCorrupt`). Such an entry is dead
        /// lettered, never sent as an empty event.
        public var bodyLost = false
    }

    /// How much waits for one webhook.
    public struct OutboxDepth: Sendable, Equatable {
        public var webhook: String
        public var pending: Int
        public var oldest: Timestamp?
        public var deadLetters: Int
        /// Dead letters discarded, oldest first, to keep `deadLetterLimit`.
        public var deadLettersDiscarded = 0
    }

    public struct DeadLetter: Sendable, Equatable {
        public var webhook: String
        public var eventID: String
        public var type: String
        public var enqueuedAt: Timestamp
        public var diedAt: Timestamp
        public var reason: String
    }

    /// The oldest entries waiting for a webhook, at most `limit`; only those after `seq`
    /// (a worker's delivered entries whose deletion the disk did not take). An entry whose
    /// body a damaged page took is read with `bodyLost` set, never as an empty body: it is
    /// not to be sent (`deadLetterLostBodies`).
    public func pending(webhook: String, after seq: Int64 = 0, limit: Int) throws -> [OutboxEntry] {
        try db.read { (db) throws(SQLiteError) in
            try db.rows(
                """
                SELECT o.seq, o.event_id, o.type, \(Self.outboxBody), o.enqueued_ns FROM outbox o \(Self.joinOutboxBody)
                WHERE o.webhook = ? AND o.seq > ? ORDER BY o.seq LIMIT ?
                """,
                [webhook, seq, limit]
            ) {
                var entry = OutboxEntry(
                    seq: $0.int64(0), eventID: $0.string(1), type: $0.string(2), body: $0.string(3),
                    enqueuedAt: Timestamp(nanoseconds: $0.int64(4)))
                entry.bodyLost = $0.isNull(3)
                return entry
            }
        }
    }

    /// Removes what a webhook acknowledged: its entries up to and including `seq`.
    public func delivered(webhook: String, through seq: Int64) throws {
        try db.write { (db) throws(SQLiteError) in
            try db.execute("DELETE FROM outbox WHERE webhook = ? AND seq <= ?", [webhook, seq])
        }
    }

    /// Removes entries another gateway of the site delivered (SPEC §6.3). Entries that carry a
    /// decider's id (`takeDecision`) go when that decider's mark reaches the time it enqueued
    /// them (`marks`: gateway → its `delivered` mark for this webhook); this gateway's own
    /// entries, which no locator decided, go when enqueued before `ownBefore` (nil: none).
    /// Returns how many.
    public func deliveredElsewhere(webhook: String, ownBefore: Timestamp?, marks: [String: Timestamp]) throws -> Int {
        try db.write { (db) throws(SQLiteError) in
            var removed = 0
            if let ownBefore {
                try db.execute(
                    "DELETE FROM outbox WHERE webhook = ? AND enqueued_ns < ? AND decider IS NULL",
                    [webhook, ownBefore.nanoseconds])
                removed += db.changes
            }
            for (decider, through) in marks {
                try db.execute(
                    "DELETE FROM outbox WHERE webhook = ? AND decider = ? AND decider_enqueued_ns <= ?",
                    [webhook, decider, through.nanoseconds])
                removed += db.changes
            }
            return removed
        }
    }

    /// This gateway's own alerts waiting in any outbox, each once (its id, body and first
    /// enqueue time), oldest first; `types` are left out. What a gateway that becomes the site's
    /// locator tells the others before it delivers them (SPEC §6.3).
    public func ownEntries(excluding types: [String]) throws -> [(id: String, body: String, enqueuedAt: Timestamp)] {
        let placeholders = types.map { _ in "?" }.joined(separator: ", ")
        return try db.read { (db) throws(SQLiteError) in
            try db.rows(
                """
                SELECT o.event_id, \(Self.outboxBody), MIN(o.enqueued_ns) FROM outbox o \(Self.joinOutboxBody)
                WHERE o.decider IS NULL AND \(Self.bodyKept) AND o.type NOT IN (\(placeholders.isEmpty ? "''" : placeholders))
                GROUP BY o.event_id ORDER BY MIN(o.seq)
                """, types
            ) { (id: $0.string(0), body: $0.string(1), enqueuedAt: Timestamp(nanoseconds: $0.int64(2))) }
        }
    }

    /// Takes this gateway's own alert `eventID` (no locator's id on it) out of every outbox: a
    /// new locator's alert that repeats what the site already told (SPEC §6.3). It stays in
    /// the history. Returns how many entries went.
    @discardableResult
    public func dropOwn(eventID: String) throws -> Int {
        try db.write { (db) throws(SQLiteError) in
            try db.execute("DELETE FROM outbox WHERE event_id = ? AND decider IS NULL", [eventID])
            return db.changes
        }
    }

    /// Takes this gateway's own alerts (no locator's id on them) enqueued before `cutoff` out of
    /// every outbox: alerts no locator decided (`SiteDeliveryGate.undecidedBefore`), which a
    /// gateway becoming the locator must not tell as the site's. They stay in the history.
    @discardableResult
    public func dropOwn(enqueuedBefore cutoff: Timestamp) throws -> Int {
        try db.write { (db) throws(SQLiteError) in
            try db.execute("DELETE FROM outbox WHERE enqueued_ns < ? AND decider IS NULL", [cutoff.nanoseconds])
            return db.changes
        }
    }

    /// Puts the site locator's id, body and time on this gateway's own copy of an alert
    /// (`ownID`): in every outbox that holds it, with who decided it and when it enqueued it,
    /// and in the history, so that a consumer finds the alert by the id the history shows
    /// whichever gateway delivers it (issue 51: a new locator's history held its own ids while
    /// the site had delivered the old locator's). A history that holds `id` already keeps that
    /// row and loses its own copy. Returns how many outbox entries took it.
    @discardableResult
    public func takeDecision(
        ownID: String, id: String, body: String, time: Timestamp, decider: String, enqueuedAt: Timestamp
    ) throws -> Int {
        let taken = try db.write { (db) throws(SQLiteError) in
            // The body the entries share (`oneBodyMigration`) becomes the decider's; rows
            // from before it carry their own copy, and take it in the row.
            let ownSeq = try db.scalarInt64("SELECT seq FROM event WHERE id = ?", [ownID])
            let bodySeq =
                try db.scalarInt64(
                    "SELECT body_seq FROM outbox WHERE event_id = ? AND body_seq IS NOT NULL LIMIT 1", [ownID])
                ?? ownSeq
            try db.execute(
                """
                UPDATE outbox SET event_id = ?, body = CASE WHEN body_seq IS NULL THEN ? ELSE '' END, decider = ?,
                  decider_enqueued_ns = ? WHERE event_id = ?
                """, [id, body, decider, enqueuedAt.nanoseconds, ownID])
            let entries = db.changes
            if let bodySeq { try db.execute("UPDATE event_body SET body = ? WHERE seq = ?", [body, bodySeq]) }
            try db.execute(
                "UPDATE OR IGNORE event SET id = ?, body = CASE WHEN body = '' THEN '' ELSE ? END, time_ns = ? WHERE id = ?",
                [id, body, time.nanoseconds, ownID])
            guard db.changes == 0 else { return (entries, false) }
            // The history holds `id` already: the entries point at that row's body, and the
            // own row goes (its body with it, nothing pointing at it any more).
            if let kept = try db.scalarInt64("SELECT seq FROM event WHERE id = ?", [id]), let bodySeq, kept != bodySeq {
                try db.execute("INSERT OR REPLACE INTO event_body (seq, body) VALUES (?, ?)", [kept, body])
                try db.execute(
                    "UPDATE outbox SET body_seq = ? WHERE event_id = ? AND body_seq = ?", [kept, id, bodySeq])
            }
            try db.execute("DELETE FROM event WHERE id = ?", [ownID])
            return (entries, db.changes > 0)
        }
        // A rename changes no class's count; a copy dropped is one alert fewer (alerts alone are
        // handed over). Counted, not recounted: a recount reads the whole history at the next
        // commit, on the engine's thread, and this runs for every alert a standby takes.
        if taken.1 { historyCounts.withLock { $0?.add(telemetry: false, -1) } }
        return taken.0
    }

    /// Moves a webhook's waiting entries' enqueue times by a step of the wall clock: their age
    /// against `max_age` is the time they waited, and a step is not.
    public func shiftEnqueued(webhook: String, by step: TimeSpan) throws {
        try db.write { (db) throws(SQLiteError) in
            try db.execute(
                "UPDATE outbox SET enqueued_ns = enqueued_ns + ? WHERE webhook = ?", [step.nanoseconds, webhook])
        }
    }

    /// Moves a webhook's entries enqueued before `cutoff` to the dead letters; returns how many.
    @discardableResult
    public func expire(webhook: String, enqueuedBefore cutoff: Timestamp, at now: Timestamp, reason: String) throws
        -> Int
    {
        try db.write { (db) throws(SQLiteError) in
            try db.execute(
                """
                INSERT INTO dead_letter (webhook, event_id, type, body, enqueued_ns, dead_ns, reason)
                SELECT o.webhook, o.event_id, o.type, COALESCE(\(Self.outboxBody), ''), o.enqueued_ns, ?, ? FROM outbox o
                \(Self.joinOutboxBody) WHERE o.webhook = ? AND o.enqueued_ns < ? ORDER BY o.seq
                """, [now.nanoseconds, reason, webhook, cutoff.nanoseconds])
            try db.execute("DELETE FROM outbox WHERE webhook = ? AND enqueued_ns < ?", [webhook, cutoff.nanoseconds])
            let moved = db.changes
            try capDeadLetters(db, webhook: webhook)
            return moved
        }
    }

    /// The dead letters' reason for an entry whose body was lost (`OutboxEntry.bodyLost`).
    public static let bodyLostReason = "body_lost"

    /// Moves a webhook's entries whose bodies a damaged page took to the dead letters (reason
    /// `body_lost`, with an empty body): the id and type say what the receiver missed. Why not
    /// send them: a batch of empty events is refused by a strict receiver — holding every
    /// later alert behind it until `max_age` — or "delivered" unread by a lenient one.
    @discardableResult
    public func deadLetterLostBodies(webhook: String, at now: Timestamp) throws -> Int {
        try db.write { (db) throws(SQLiteError) in
            try db.execute(
                """
                INSERT INTO dead_letter (webhook, event_id, type, body, enqueued_ns, dead_ns, reason)
                SELECT o.webhook, o.event_id, o.type, '', o.enqueued_ns, ?, ? FROM outbox o
                WHERE o.webhook = ? AND NOT \(Self.bodyKept) ORDER BY o.seq
                """, [now.nanoseconds, Self.bodyLostReason, webhook])
            try db.execute(
                """
                DELETE FROM outbox WHERE webhook = ? AND body_seq IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM event_body x WHERE x.seq = outbox.body_seq)
                """, [webhook])
            let moved = db.changes
            try capDeadLetters(db, webhook: webhook)
            return moved
        }
    }

    /// An outbox row (`o`) whose body is still there: its own (before v13) or the one it points at.
    static let bodyKept = "(o.body_seq IS NULL OR EXISTS (SELECT 1 FROM event_body x WHERE x.seq = o.body_seq))"

    /// Keeps a webhook's newest `deadLetterLimit` dead letters, counting those discarded.
    private func capDeadLetters(_ db: SQLiteConnection, webhook: String) throws(SQLiteError) {
        try db.execute(
            """
            DELETE FROM dead_letter WHERE webhook = ? AND seq <= (SELECT seq FROM dead_letter WHERE webhook = ?
              ORDER BY seq DESC LIMIT 1 OFFSET ?)
            """, [webhook, webhook, deadLetterLimit])
        let discarded = db.changes
        if discarded > 0 {
            try db.execute(
                """
                INSERT INTO dead_letter_discarded (webhook, count) VALUES (?, ?)
                ON CONFLICT (webhook) DO UPDATE SET count = count + excluded.count
                """, [webhook, discarded])
        }
    }

    /// Moves everything waiting for webhooks that are no longer configured to the dead
    /// letters (reason `removed`); returns how many per webhook. No worker delivers or
    /// expires them any more: left in the outbox they would be counted as pending for ever.
    @discardableResult
    public func retireWebhooks(keeping configured: Set<String>, at now: Timestamp) throws -> [String: Int] {
        // One index seek per webhook, not a scan of a backlog that may hold a day of events:
        // this runs at start, before READY.
        let waiting = try db.read { (db) throws(SQLiteError) in
            try db.rows(
                """
                WITH RECURSIVE hook(id) AS (
                  SELECT MIN(webhook) FROM outbox
                  UNION ALL SELECT (SELECT MIN(webhook) FROM outbox WHERE webhook > hook.id) FROM hook WHERE id IS NOT NULL)
                SELECT id FROM hook WHERE id IS NOT NULL
                """
            ) { $0.string(0) }
        }
        var moved: [String: Int] = [:]
        for webhook in waiting where !configured.contains(webhook) {
            moved[webhook] = try retire(webhook: webhook, at: now)
        }
        return moved
    }

    /// Moves everything waiting for one webhook to the dead letters (reason `removed`).
    @discardableResult
    public func retire(webhook: String, at now: Timestamp) throws -> Int {
        try expire(webhook: webhook, enqueuedBefore: Timestamp(nanoseconds: .max), at: now, reason: "removed")
    }

    /// Pending and dead counts for every webhook that has either.
    public func outboxDepths() throws -> [OutboxDepth] {
        try db.read { (db) throws(SQLiteError) in
            var depths: [String: OutboxDepth] = [:]
            let pending = try db.rows("SELECT webhook, COUNT(*), MIN(enqueued_ns) FROM outbox GROUP BY webhook") {
                OutboxDepth(
                    webhook: $0.string(0), pending: $0.int(1),
                    oldest: $0.optionalInt64(2).map(Timestamp.init(nanoseconds:)), deadLetters: 0)
            }
            for depth in pending { depths[depth.webhook] = depth }
            let none = { (id: String) in OutboxDepth(webhook: id, pending: 0, oldest: nil, deadLetters: 0) }
            let dead = try db.rows("SELECT webhook, COUNT(*) FROM dead_letter GROUP BY webhook") {
                ($0.string(0), $0.int(1))
            }
            for (id, count) in dead { depths[id, default: none(id)].deadLetters = count }
            let discarded = try db.rows("SELECT webhook, count FROM dead_letter_discarded") {
                ($0.string(0), $0.int(1))
            }
            for (id, count) in discarded { depths[id, default: none(id)].deadLettersDiscarded = count }
            return depths.values.sorted { $0.webhook < $1.webhook }
        }
    }

    /// The newest dead letters first.
    public func deadLetters(limit: Int = 100) throws -> [DeadLetter] {
        try db.read { (db) throws(SQLiteError) in
            try db.rows(
                "SELECT webhook, event_id, type, enqueued_ns, dead_ns, reason FROM dead_letter ORDER BY seq DESC LIMIT ?",
                [limit]
            ) {
                DeadLetter(
                    webhook: $0.string(0), eventID: $0.string(1), type: $0.string(2),
                    enqueuedAt: Timestamp(nanoseconds: $0.int64(3)), diedAt: Timestamp(nanoseconds: $0.int64(4)),
                    reason: $0.string(5))
            }
        }
    }

    /// Marks a webhook disabled (410 Gone) for its current URL; nil re-enables it. A
    /// disabled webhook stays disabled across restarts until its URL changes.
    public func setDisabled(webhook: String, url: String, reason: String?, at now: Timestamp) throws {
        try db.write(patient: true) { (db) throws(SQLiteError) in
            try db.execute(
                "INSERT OR REPLACE INTO webhook_state (webhook, url, disabled_reason, disabled_ns) VALUES (?, ?, ?, ?)",
                [webhook, url, reason, reason == nil ? nil : now.nanoseconds])
        }
    }

    /// Why a webhook is disabled for this URL, or nil.
    public func disabledReason(webhook: String, url: String) throws -> String? {
        try db.read { (db) throws(SQLiteError) in
            try db.scalarString(
                "SELECT disabled_reason FROM webhook_state WHERE webhook = ? AND url = ?", [webhook, url])
        }
    }
}
