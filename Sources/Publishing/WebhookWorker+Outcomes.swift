import BeaconCore
import Logging
import Storage
import Synchronization

/// A delivery's request headers, and what a failure or a 410 does to the worker.
extension WebhookWorker {
    /// A delivery's headers. `messageID` names the batch, the same on every retry of it (a
    /// Standard Webhooks receiver de-duplicates by `webhook-id`).
    func headers(body: [UInt8], at t: Timestamp, messageID: String) -> [String] {
        var headers = [
            "Content-Type: application/cloudevents-batch+json", "User-Agent: beacond",
            "X-Beacond-Webhook: \(settings.id)",
        ]
        if let gateway = settings.gateway { headers.append("X-Beacond-Gateway: \(gateway)") }
        guard let secret = settings.secret else { return headers }
        let timestamp = String(t.nanoseconds / 1_000_000_000)
        switch settings.signature {
        case .beacond:
            let signature = HMACSHA256.hex(key: secret, message: Array((timestamp + ".").utf8) + body)
            headers.append("X-Beacond-Timestamp: \(timestamp)")
            headers.append("X-Beacond-Signature: sha256=\(signature)")
        case .standard:
            let signed = Array("\(messageID).\(timestamp).".utf8) + body
            headers.append("webhook-id: \(messageID)")
            headers.append("webhook-timestamp: \(timestamp)")
            headers.append("webhook-signature: v1,\(Base64.encode(HMACSHA256.mac(key: secret, message: signed)))")
        }
        return headers
    }

    /// A batch's message id: its first and last events' ids, so a retry of the same events
    /// carries the same id.
    static func messageID(_ batch: [StateStore.OutboxEntry]) -> String {
        guard let first = batch.first, let last = batch.last else { return "empty" }
        return first.eventID == last.eventID ? first.eventID : "\(first.eventID)_\(last.eventID)"
    }

    func failed(_ reason: String, at now: Timestamp) {
        let retry = schedule.failed(at: now, jitter: Double.random(in: 0..<1))
        let failures = schedule.failures
        state.withLock {
            $0.requestsFailed += 1
            $0.lastError = reason
            $0.lastErrorAt = now
            $0.retryAt = retry
        }
        // The first failure and then every tenth: a receiver down for an hour is not a flood.
        if failures == 1 || failures % 10 == 0 {
            logger.warning(
                "webhook.failed",
                metadata: [
                    "webhook": "\(settings.id)", "error": "\(reason)", "attempts": "\(failures)",
                    "retry_in": "\(retry - now)",
                ])
        }
    }

    func disable(reason: String, at now: Timestamp) {
        try? store.setDisabled(webhook: settings.id, url: settings.url, reason: reason, at: now)
        let moved =
            (try? store.expire(
                webhook: settings.id, enqueuedBefore: Timestamp(nanoseconds: .max), at: now, reason: "gone"))
            ?? 0
        state.withLock {
            $0.disabled = reason
            $0.deadLettered += moved
            $0.lastError = reason
            $0.lastErrorAt = now
        }
        logger.error(
            "webhook.disabled",
            metadata: [
                "webhook": "\(settings.id)", "reason": "\(reason)", "dead_letters": "\(moved)",
                "next": "fix the receiver and change the webhook's url",
            ])
    }
}
