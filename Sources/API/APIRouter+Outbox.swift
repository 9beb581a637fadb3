import APIModel
import BeaconConfig
import BeaconCore
import BeaconRuntime
import HTTPServer
import Publishing
import Storage

/// `GET /v1/outbox`: each webhook's state, backlog and counters, and the newest dead letters.
extension APIRouter {
    func outbox() -> HTTPReply {
        guard let store = context.store else {
            return Reply.error(503, "no_state_store", "the state store is unavailable; webhooks are not delivered")
        }
        do {
            let depths = try store.outboxDepths()
            let dead = try store.deadLetters(limit: 100)
            var report = OutboxReport()
            report.webhooks = context.webhooks.map { Self.webhook($0, depths: depths) }
            report.deadLetters = dead.map { d in
                var letter = OutboxReport.DeadLetter()
                (letter.webhook, letter.id, letter.type, letter.reason) = (d.webhook, d.eventID, d.type, d.reason)
                (letter.enqueued, letter.dead) = (RFC3339.format(d.enqueuedAt), RFC3339.format(d.diedAt))
                return letter
            }
            return Reply.json(report.json)
        } catch {
            return Reply.error(500, "store_unreadable", "\(error)")
        }
    }
}
