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
            return Reply.json(
                .object([
                    ("webhooks", .array(context.webhooks.map { Self.webhook($0, depths: depths).json })),
                    (
                        "dead_letters",
                        .array(
                            dead.map { d in
                                .object([
                                    ("webhook", .string(d.webhook)), ("id", .string(d.eventID)),
                                    ("type", .string(d.type)),
                                    ("enqueued", .time(d.enqueuedAt)), ("dead", .time(d.diedAt)),
                                    ("reason", .string(d.reason)),
                                ])
                            })
                    ),
                ]))
        } catch {
            return Reply.error(500, "store_unreadable", "\(error)")
        }
    }
}
