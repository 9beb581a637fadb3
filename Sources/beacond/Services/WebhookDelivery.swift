import BeaconConfig
import BeaconCore
import BeaconRuntime
import Logging
import Publishing
import Storage

/// The webhooks' workers, each on its own thread, delivering from the durable outbox. Stopped
/// after the engine and the held events' last try, so that each makes a last delivery attempt
/// with everything the daemon produced. A reload replaces only the webhooks that changed.
final class WebhookDelivery: DaemonService, Sendable {
    let name = "webhooks"
    /// The site's events' worker publishes on the broker connection, to its last attempt.
    let startsAfter = ["site-connection"]
    private let publisher: EventPublisher
    private let store: StateStore
    /// Outboxes delivered whatever the webhooks say (the site's `events/`): kept on reload.
    private let fixed: Set<String>
    private let threads = ServiceThreads()
    private let logger: Logger
    private let makeWorker: @Sendable (WebhookWorker.Settings) -> WebhookWorker
    private let settings: @Sendable ([WebhookSpec]) -> [WebhookWorker.Settings]

    /// `settings` reads each webhook's secret file (again on every reload); `makeWorker`
    /// builds a worker for one.
    init(
        publisher: EventPublisher, store: StateStore, fixed: Set<String> = [], logger: Logger,
        settings: @escaping @Sendable ([WebhookSpec]) -> [WebhookWorker.Settings],
        makeWorker: @escaping @Sendable (WebhookWorker.Settings) -> WebhookWorker
    ) {
        self.publisher = publisher
        self.store = store
        self.fixed = fixed
        self.logger = logger
        self.settings = settings
        self.makeWorker = makeWorker
    }

    func start() throws {
        for worker in publisher.workers { threads.spawn(named: "hook-" + worker.settings.id) { worker.run() } }
    }

    func stop() {
        for worker in publisher.workers { worker.stop() }
        threads.join()
    }

    /// Each webhook is built afresh from the file, its secret file read again (a rotated key
    /// takes effect on `systemctl reload`); a running worker whose settings, secret included,
    /// are the same keeps running, so an unchanged webhook neither restarts nor sends a batch
    /// twice; a changed one's new worker starts after the old one's last attempt, for the same
    /// reason. A kept webhook waiting on its backoff retries at once. Workers of removed
    /// webhooks dead-letter their backlog after their last attempt.
    func apply(_ reload: ConfigReload, from old: Config) -> Logger.Metadata {
        let specs = reload.running.webhooks
        let running = publisher.workers
        var next = running.filter { fixed.contains($0.settings.id) }
        var started: [WebhookWorker] = []
        for settings in settings(specs) {
            if let same = running.first(where: { $0.settings == settings }) {
                // A reload is often the operator's "the receiver is fixed": retry at once.
                same.retryNow()
                next.append(same)
            } else {
                let fresh = makeWorker(settings)
                next.append(fresh)
                started.append(fresh)
            }
        }
        let stopped = running.filter { worker in !next.contains { $0 === worker } }
        guard !started.isEmpty || !stopped.isEmpty else { return ["webhooks": "unchanged"] }
        _ = publisher.replaceWorkers(next)
        let ids = Set(specs.map(\.id))
        for worker in stopped { worker.stop(ids.contains(worker.settings.id) ? .replaced : .removed) }
        for worker in started {
            // A changed webhook's new worker waits for the old one's last attempt.
            let predecessor = stopped.first { $0.settings.id == worker.settings.id }
            threads.spawn(named: "hook-" + worker.settings.id) {
                predecessor?.waitUntilFinished()
                worker.run()
            }
        }
        return ["webhooks": "\(started.count) started, \(next.count - started.count) kept, \(stopped.count) stopped"]
    }
}
