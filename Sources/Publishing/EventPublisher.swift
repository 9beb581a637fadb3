import BeaconCore
import BeaconRuntime
import Storage
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Turns the engine's events into CloudEvents and hands them to every output, durable
/// first: the history and each interested webhook's outbox get them in one transaction,
/// and only then do standard output and the live streams show them. A crash can therefore
/// never show an event that a restart would not deliver.
public final class EventPublisher: @unchecked Sendable {
    private let gateway: String
    private let store: StateStore?
    private let workerList: Mutex<[WebhookWorker]>
    private let clock: @Sendable () -> Timestamp
    private let log: @Sendable (String) -> Void
    private let ids: Mutex<EventIDGenerator>
    private let storeFailed = Atomic<Bool>(false)
    private let byType = Mutex<[String: Int]>([:])
    /// Echo events on standard output as JSON Lines.
    private let echo: Bool
    private var listeners: [@Sendable ([StateStore.StoredEvent]) -> Void] = []

    public init(
        gateway: String, store: StateStore?, workers: [WebhookWorker], echo: Bool,
        clock: @escaping @Sendable () -> Timestamp, log: @escaping @Sendable (String) -> Void
    ) {
        self.gateway = gateway
        self.store = store
        workerList = Mutex(workers)
        self.echo = echo
        self.clock = clock
        self.log = log
        ids = Mutex(EventIDGenerator(nonce: UInt32.random(in: .min ... .max)))
    }

    /// Adds an output that sees every stored batch (the live stream). Call before events flow.
    public func addListener(_ listener: @escaping @Sendable ([StateStore.StoredEvent]) -> Void) {
        listeners.append(listener)
    }

    /// The webhooks events are routed to.
    public var workers: [WebhookWorker] { workerList.withLock { $0 } }

    /// Routes new events to these webhooks from now on (a reload); returns the previous ones.
    @discardableResult
    public func replaceWorkers(_ workers: [WebhookWorker]) -> [WebhookWorker] {
        workerList.withLock { list in
            defer { list = workers }
            return list
        }
    }

    /// Events published so far, by CloudEvents type.
    public var countsByType: [String: Int] { byType.withLock { $0 } }

    /// Called on the engine's thread with each batch, in order.
    public func publish(_ events: [Event]) {
        guard !events.isEmpty else { return }
        var stored: [StateStore.StoredEvent] = []
        stored.reserveCapacity(events.count)
        for event in events {
            let id = ids.withLock { $0.next(for: event.time) }
            let json = CloudEvent.json(event, id: id, gatewayID: gateway).serialized
            stored.append(.init(id: id, type: "beacond." + event.payload.kind, time: event.time, body: json))
        }
        byType.withLock { counts in for e in stored { counts[e.type, default: 0] += 1 } }
        var routed = false
        let workers = self.workers
        do {
            try store?.append(stored, at: clock()) { event in
                let targets = workers.filter { !$0.isDisabled && $0.settings.events.matches(type: event.type) }
                if !targets.isEmpty { routed = true }
                return targets.map(\.settings.id)
            }
        } catch {
            if !storeFailed.exchange(true, ordering: .relaxed) {
                log("error: state.write_failed error=\(error) next=events are neither kept nor sent to webhooks")
            }
        }
        if echo { writeAll(fd: 1, stored.map { $0.body + "\n" }.joined()) }
        for listener in listeners { listener(stored) }
        if routed { for worker in workers { worker.notify() } }
    }
}
