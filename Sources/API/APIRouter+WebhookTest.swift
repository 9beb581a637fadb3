import APIModel
import BeaconConfig
import BeaconCore
import HTTPServer
import Publishing

/// `POST /v1/webhooks/{id}/test`: one signed `beacond.webhook.test` event sent to the webhook
/// now (`WebhookWorker.sendTest`), answered with what its receiver said. 200 when it took it
/// (a 2xx), 502 with the reason when it did not; 404 for a webhook the configuration does not
/// have, 409 while an earlier test of it is still waiting. The receiver is waited for, up to
/// the webhook's `timeout`, on a thread of its own (`HTTPReply.later`): a receiver that hangs
/// holds up the operator who asked, not every other client of the API.
extension APIRouter {
    func testWebhook(id: String) -> HTTPReply {
        guard let worker = context.webhooks.first(where: { $0.settings.id == id }) else {
            return Reply.error(404, "unknown_webhook", "no webhook \"\(id)\" in the configuration")
        }
        let now = context.clock()
        let event = CloudEvent.text(
            id: "test-\(now.nanoseconds)", gatewayID: context.config.gateway.id, kind: "webhook.test", time: now,
            subject: id,
            data: .object([
                ("webhook", .string(id)),
                ("note", .string("a test delivery asked for by an operator; not an alert, not sent again")),
            ]))
        let url = worker.settings.url
        let signed = worker.settings.secret != nil
        return .later { answer in
            let started = worker.startTest(event, at: now) { result in
                answer(Self.testReply(id: id, url: url, signed: signed, result))
            }
            if !started {
                answer(
                    HTTPResponse.error(
                        status: 409, code: "webhook_test_running",
                        message: "a test of \(id) is still waiting for \(url); try again when it has answered"))
            }
        }
    }

    /// 200 with what the receiver said when it took the event, else 502 with why not.
    static func testReply(id: String, url: String, signed: Bool, _ result: WebhookWorker.TestResult)
        -> HTTPResponse
    {
        let took = Int(result.millis.rounded())
        let answer = result.status.map { "HTTP \($0)" } ?? result.error ?? "no answer"
        guard result.ok else {
            return HTTPResponse.error(
                status: 502, code: "webhook_test_failed", message: "\(id): \(answer) from \(url) after \(took) ms")
        }
        var report = WebhookTestReport()
        (report.webhook, report.url, report.status) = (id, url, result.status ?? 0)
        (report.tookMilliseconds, report.signed) = (took, signed)
        return Reply.jsonResponse(report.json)
    }
}
