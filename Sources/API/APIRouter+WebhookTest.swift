import BeaconConfig
import BeaconCore
import HTTPServer
import Publishing

/// `POST /v1/webhooks/{id}/test`: one signed `beacond.webhook.test` event sent to the webhook
/// now (`WebhookWorker.sendTest`), answered with what its receiver said. 200 when it took it
/// (a 2xx), 502 with the reason when it did not; 404 for a webhook the configuration does not
/// have. The API's thread waits for it, up to the webhook's `timeout`.
extension APIRouter {
    func testWebhook(id: String) -> HTTPReply {
        guard let worker = context.webhooks.first(where: { $0.settings.id == id }) else {
            return Reply.error(404, "unknown_webhook", "no webhook \"\(id)\" in the configuration")
        }
        let now = context.clock()
        let event = CloudEvent.envelope(
            id: "test-\(now.nanoseconds)", gatewayID: context.config.gateway.id, kind: "webhook.test", time: now,
            subject: id,
            data: .object([
                ("webhook", .string(id)),
                ("note", .string("a test delivery asked for by an operator; not an alert, not sent again")),
            ]))
        let result = worker.sendTest(event.serialized, at: now)
        let took = Int(result.millis.rounded())
        let answer = result.status.map { "HTTP \($0)" } ?? result.error ?? "no answer"
        guard result.ok else {
            return Reply.error(
                502, "webhook_test_failed", "\(id): \(answer) from \(worker.settings.url) after \(took) ms")
        }
        return Reply.json(
            .object([
                ("webhook", .string(id)), ("url", .string(worker.settings.url)), ("status", .int(result.status ?? 0)),
                ("took_ms", .int(took)), ("signed", .bool(worker.settings.secret != nil)),
            ]))
    }
}
