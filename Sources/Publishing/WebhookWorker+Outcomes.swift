import BeaconCore
import Logging
import Storage
import Synchronization

/// What a failure or a 410 does to the worker.
extension WebhookWorker {
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
