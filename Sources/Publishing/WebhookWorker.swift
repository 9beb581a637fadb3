import BeaconCore
import Dispatch
import Logging
import Storage
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Delivers one webhook's outbox (SPEC §4.2) on its own thread, so a dead or slow receiver
/// never delays monitoring, the API or the other webhooks.
///
/// Events are already durable in the outbox when the worker sees them; an entry is deleted
/// only after a 2xx, so a crash at any point means a resend of the same events with the same
/// ids (receivers de-duplicate by id), never a loss. The batch leaves in outbox order, and
/// nothing newer is sent while an older batch is being retried, so each webhook sees events
/// in order.
/// `@unchecked Sendable`: the schedule, the clock-step detector and the summaries are its own
/// thread's; counters and the state others read are behind a lock.
public final class WebhookWorker: @unchecked Sendable {
    public struct Settings: Sendable, Equatable {
        public var id: String
        public var url: String
        public var events: EventTypeGlob
        /// The HMAC key: the secret file's text (`beacond`), or the key a `whsec_` secret holds.
        public var secret: [UInt8]?
        public var signature: WebhookSignature
        public var schedule: DeliverySchedule
        public var timeout: TimeSpan
        /// The gateway that sends, in the `X-Beacond-Gateway` header: in a site, every gateway's
        /// events say the site as their source, and an operator still wants to know which
        /// gateway delivered. nil: no header.
        public var gateway: String?

        public init(
            id: String, url: String, events: EventTypeGlob, secret: [UInt8]?, signature: WebhookSignature = .beacond,
            schedule: DeliverySchedule, timeout: TimeSpan
        ) {
            self.id = id
            self.url = url
            self.events = events
            self.secret = secret
            self.signature = signature
            self.schedule = schedule
            self.timeout = timeout
        }
    }

    /// Counts for metrics and status, readable from any thread.
    public struct Counters: Sendable, Equatable {
        public var delivered = 0
        public var requestsOK = 0
        public var requestsFailed = 0
        public var deadLettered = 0
        public var lastError: String?
        public var lastErrorAt: Timestamp?
        public var disabled: String?
        public var retryAt: Timestamp?
        public var lastLatencyMillis: Double?
        /// Dropped while standing by: the site's locator delivered them.
        public var deliveredByLocator = 0
        /// Positions replaced by a newer one of the same asset (or older than `max_age`)
        /// before they were sent: what an output that was behind did not get (SPEC §4.4).
        public var positionsConflated = 0
        /// Positions waiting in memory, one per asset at most.
        public var positionsWaiting = 0
    }

    public let settings: Settings
    let store: StateStore
    let clock: @Sendable () -> Timestamp
    let logger: Logger
    private let wake = DispatchSemaphore(value: 0)
    private let stopRequested = Atomic<Bool>(false)
    private let retryRequested = Atomic<Bool>(false)
    private let stopReason = Atomic<UInt8>(StopReason.shutdown.rawValue)
    /// When `stop()` was called (nanoseconds of `clock`): the last attempt ends `flushTime`
    /// after it, however long the request in flight took to be cut.
    private let stoppedAt = Atomic<Int64>(0)
    let state = Mutex(Counters())
    var schedule: DeliverySchedule
    /// What the worker asks and tells the daemon, fixed at construction.
    public let hooks: Hooks

    private var steps = ClockStepDetector()
    var expiries = LogSummary()
    /// Acknowledged by the receiver through this entry, but not yet deleted from the outbox:
    /// the disk would not take the delete (full). Kept here so that the batch is not sent
    /// again and again while the process lives, and in `hooks.acks` so that the next run
    /// does not send it either; the delete is tried again at each look.
    var unsavedAck: UnsavedAcks.Ack?
    var ackFailures = FailureEpisode()
    var outboxFailures = FailureEpisode()
    /// Signalled when `run()` returns.
    private let finished = DispatchSemaphore(value: 0)
    /// Where batches go: `settings.url` over HTTP unless the worker was given another.
    let transport: any BatchTransport
    /// A test delivery is under way (`startTest`).
    let testRunning = Atomic<Bool>(false)
    /// The latest position of each asset not sent yet: positions never wait in the outbox.
    let positions = Mutex(ConflatedPositions())

    public init(
        settings: Settings, store: StateStore, clock: @escaping @Sendable () -> Timestamp,
        logger: Logger, transport: (any BatchTransport)? = nil, hooks: Hooks = Hooks()
    ) {
        self.hooks = hooks
        self.settings = settings
        self.transport = transport ?? HTTPBatchTransport(settings: settings, clock: clock)
        self.store = store
        self.clock = clock
        self.logger = logger
        self.schedule = settings.schedule
        let disabled = try? store.disabledReason(webhook: settings.id, url: settings.url)
        state.withLock { $0.disabled = disabled }
        unsavedAck = adoptKeptAck()
        if let disabled {
            logger.warning(
                "webhook.disabled",
                metadata: ["webhook": "\(settings.id)", "reason": "\(disabled)", "next": "change its url to enable it"])
        }
    }

    public var counters: Counters {
        let (conflated, waiting) = positions.withLock { ($0.conflated, $0.count) }
        var c = state.withLock { $0 }
        (c.positionsConflated, c.positionsWaiting) = (conflated, waiting)
        return c
    }
    public var isDisabled: Bool { counters.disabled != nil }

    /// New events are in the outbox.
    public func notify() { wake.signal() }

    /// New positions (`EventClass.position`), each with its asset: they replace the ones of the
    /// same assets still waiting, and go with the next batch, after the alerts waiting. A
    /// standby keeps none: the site's locator sends them, and the next ones come in seconds.
    public func offer(_ fresh: [(asset: String, event: StateStore.StoredEvent)], at now: Timestamp) {
        guard !fresh.isEmpty, settings.events.matches(type: fresh[0].event.type), !isDisabled else { return }
        if case .standby = hooks.role?() ?? .deliver { return }
        positions.withLock { waiting in
            for p in fresh {
                waiting.offer(
                    asset: p.asset,
                    .init(seq: 0, eventID: p.event.id, type: p.event.type, body: p.event.body, enqueuedAt: now))
            }
        }
        wake.signal()
    }

    /// Tries the waiting events now instead of at the backoff's next attempt (up to 5 min
    /// after the last failure): a test delivery the receiver acknowledged, or a reload, says
    /// it is back.
    public func retryNow() {
        retryRequested.store(true, ordering: .releasing)
        wake.signal()
    }

    /// Why a worker stops, which decides its last attempt.
    public enum StopReason: UInt8, Sendable {
        /// SIGTERM: one last attempt to send what is waiting; the rest stays stored.
        case shutdown
        /// A reload changed the webhook (url, key, batching): the request in flight finishes
        /// and nothing more is sent, since the new worker delivers the rest with the new
        /// settings (a batch made after the reload is not sent with the old key).
        case replaced
        /// The webhook was taken out of the configuration: after one last attempt, what is
        /// still waiting becomes dead letters (no worker will deliver it), and not before, so
        /// nothing is both delivered and dead-lettered.
        case removed
    }

    /// Asks `run()` to return: a request in flight gets `flushTime` to finish, then is
    /// cut, so a hung receiver cannot hold up a stop (SIGTERM must end within 5 s).
    public func stop(_ reason: StopReason = .shutdown) {
        stopReason.store(reason.rawValue, ordering: .relaxed)
        stoppedAt.store(clock().nanoseconds, ordering: .releasing)
        stopRequested.store(true, ordering: .relaxed)
        transport.abort(after: WebhookWorker.flushTime)
        wake.signal()
    }

    /// How long a stopping worker may still spend delivering.
    public static let flushTime = TimeSpan.milliseconds(2500)

    /// Delivers until `stop()`; then, unless replaced, makes one last attempt, within
    /// `flushTime`, to send what is waiting (SIGTERM flushes the outbox); what is not
    /// acknowledged stays stored.
    public func run() {
        defer {
            if let report = expiries.flush(at: clock()) { tell(report, at: clock()) }
            finished.signal()
        }
        // Stopped before it ran (a reload's successor, then SIGTERM): the transport keeps the
        // abort for its first send, so the last attempt is bounded too.
        while !stopRequested.load(ordering: .relaxed) {
            let wait = step()
            guard let wait else { continue }
            _ = self.wake.wait(timeout: .now() + .nanoseconds(Int(max(0, min(wait.nanoseconds, 5_000_000_000)))))
        }
        let reason = StopReason(rawValue: stopReason.load(ordering: .relaxed)) ?? .shutdown
        // One budget from the stop on: a request in flight that had to be cut (a hung
        // receiver) has spent it, and the last attempt is not given a second one.
        let budget = WebhookWorker.flushTime
        let stopped = stoppedAt.load(ordering: .acquiring)
        let deadline = (stopped == 0 ? clock() : min(clock(), Timestamp(nanoseconds: stopped))) + budget
        while reason != .replaced, clock() < deadline, !isDisabled, schedule.retryAt == nil,
            (hooks.role?() ?? .deliver).delivers
        {
            guard let waiting = try? waiting(), !waiting.isEmpty else { break }
            let batch = waiting.prefix(while: sendable(hooks.role?() ?? .deliver))
            // The site's locator: what waits for the others to be told of it (the broker's
            // acknowledgement) is waited for, within the same budget.
            guard !batch.isEmpty else {
                _ = wake.wait(timeout: .now() + .milliseconds(20))
                continue
            }
            guard deliver(Array(batch)) else { break }
        }
        if reason == .removed {
            do {
                let moved = try store.retire(webhook: settings.id, at: clock())
                if moved > 0 { Self.logRemoved(webhook: settings.id, undelivered: moved, to: logger) }
            } catch {
                logger.error("webhook.retire_failed", metadata: ["webhook": "\(settings.id)", "error": "\(error)"])
            }
        }
    }

    /// Blocks until `run()` has returned, after `stop()`. A reload that changes a webhook
    /// starts its new worker only then: both would otherwise read the same waiting batch, and
    /// the old worker's last attempt and the new worker's first would send it twice. Bounded
    /// (its request in flight is cut after `flushTime`), so that a worker that never ran
    /// cannot hold its successor, and with it the daemon's stop, for ever.
    public func waitUntilFinished() {
        guard finished.wait(timeout: .now() + .seconds(10)) == .success else { return }
        finished.signal()
    }

    /// Logs a webhook taken out of the configuration with events still waiting.
    public static func logRemoved(webhook: String, undelivered: Int, to logger: Logger) {
        logger.warning(
            "webhook.removed",
            metadata: [
                "webhook": "\(webhook)", "undelivered": "\(undelivered)",
                "next": "its undelivered events are dead letters now (beaconctl outbox)",
            ])
    }

    /// One look at the outbox: expires, sends or decides how long to wait (nil: look again now).
    private func step() -> TimeSpan? {
        if isDisabled { return .seconds(5) }
        let now = clock()
        let role = hooks.role?() ?? .deliver
        if case let .standby(keepFrom, marks) = role { return standBy(keepFrom: keepFrom, marks: marks, at: now) }
        if retryRequested.exchange(false, ordering: .acquiringAndReleasing), let retryAt = schedule.retryAt,
            retryAt > now
        {
            schedule.retryNow(at: now)
            state.withLock { $0.retryAt = nil }
            logger.info("webhook.retry_now", metadata: ["webhook": "\(settings.id)", "was_due_in": "\(retryAt - now)"])
        }
        do {
            if let elapsed = hooks.elapsed, let step = steps.step(wall: now, elapsed: elapsed()) {
                try store.shiftEnqueued(webhook: settings.id, by: step)
                schedule.shift(by: step)
                logger.info(
                    "webhook.clock_step",
                    metadata: [
                        "webhook": "\(settings.id)", "by_s": "\(Int(step.seconds.rounded()))",
                        "next": "waiting events keep their age for max_age",
                    ])
            }
            if case let .locator(_, marks) = role, !marks.isEmpty {
                let dropped = try store.deliveredElsewhere(webhook: settings.id, ownBefore: nil, marks: marks)
                if dropped > 0 { state.withLock { $0.deliveredByLocator += dropped } }
            }
            // Expiry only when the oldest waiting event is past max_age: the check is free.
            let cutoff = schedule.expiryCutoff(now: now)
            var batch = try waiting(expiringBefore: cutoff)
            if let oldest = batch.first?.enqueuedAt, oldest < cutoff {
                let expired = try store.expire(webhook: settings.id, enqueuedBefore: cutoff, at: now, reason: "max_age")
                state.withLock { $0.deadLettered += expired }
                if let report = expiries.add(expired, at: now) { tell(report, at: now) }
                batch = try waiting()
            }
            if let took = outboxFailures.succeeded(at: now) {
                logger.info(
                    "webhook.outbox_readable",
                    metadata: ["webhook": "\(settings.id)", "after_s": "\(Int(took.seconds.rounded()))"])
            }
            let ready = batch.prefix(while: sendable(role))
            // The rest waits for the site's other gateways to be told of it: a few milliseconds.
            if ready.count < batch.count {
                guard !ready.isEmpty else { return .milliseconds(20) }
                batch = Array(ready)
            }
            switch schedule.decide(pending: batch.count, oldest: batch.first?.enqueuedAt, now: now) {
            case .idle:
                return .seconds(5)
            case let .wait(until):
                return until - now
            case let .send(count):
                _ = deliver(Array(batch.prefix(count)))
                return nil
            }
        } catch {
            // Tried again every second (a full disk fails the expiry's write): told once.
            outboxUnreadable(error, at: now)
            return .seconds(1)
        }
    }

    /// The outbox could not be read or written: told when it starts, not each second.
    func outboxUnreadable(_ error: any Error, at now: Timestamp) {
        guard outboxFailures.failed(at: now) else { return }
        logger.error(
            "webhook.outbox_unreadable",
            metadata: [
                "webhook": "\(settings.id)", "error": "\(error)",
                "next": "tried again every second; told again when it works",
            ])
    }

    /// Expired events, in the log: the first at once, then summed once a minute.
    func tell(_ report: LogSummary.Report, at now: Timestamp) {
        var metadata = report.metadata(
            count: "events", at: now, next: "later expiries are summed once a minute; beaconctl outbox lists them")
        metadata["webhook"] = "\(settings.id)"
        metadata["reason"] = "max_age"
        logger.warning("webhook.dead_letters", metadata: metadata)
    }

    /// Sends one batch; true when the transport took it. A 410 disables the webhook.
    private func deliver(_ batch: [StateStore.OutboxEntry]) -> Bool {
        let started = clock()
        do {
            try transport.send(batch, timeout: settings.timeout)
        } catch .status(410) {
            disable(reason: "410 Gone", at: clock())
            return false
        } catch {
            failed(error.description, at: clock())
            return false
        }
        acknowledged(batch, latency: clock() - started)
        return true
    }

    private func acknowledged(_ batch: [StateStore.OutboxEntry], latency: TimeSpan) {
        if let last = batch.last(where: \.isStored) {
            saveAck(through: last)
            hooks.onDelivered?(settings.id, last.enqueuedAt)
        }
        positions.withLock { $0.sent(batch.filter { !$0.isStored }) }
        schedule.succeeded()
        state.withLock {
            $0.delivered += batch.count
            $0.requestsOK += 1
            $0.retryAt = nil
            $0.lastLatencyMillis = Double(latency.nanoseconds) / 1e6
        }
    }
}
