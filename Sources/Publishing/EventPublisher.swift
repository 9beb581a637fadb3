import BeaconCore
import Logging
import POSIX
import Storage
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Turns the engine's events into CloudEvents and hands them to every output, durable
/// first: the history and each interested webhook's outbox get them in one transaction,
/// and only then do standard output and the live streams show them. A crash can therefore
/// never show an event that a restart would not deliver — except while the state store
/// cannot write (a full disk): then the live outputs still show events as they happen, and
/// the durable ones get them from memory once it can (`HeldEvents`).
/// `@unchecked Sendable`: `listeners` is filled before events flow and only read after;
/// everything that changes while they flow is behind a lock.
public final class EventPublisher: @unchecked Sendable {
    private let gateway: String
    private let store: StateStore?
    private let workerList: Mutex<[WebhookWorker]>
    private let clock: @Sendable () -> Timestamp
    private let logger: Logger
    private let ids: Mutex<EventIDGenerator>
    private let durable = Mutex(Durability())
    private let byType = Mutex<[String: Int]>([:])
    /// Echo events on standard output as JSON Lines.
    private let echo: Bool
    /// What the daemon is told as events are stored, fixed at construction.
    public let hooks: Hooks

    /// What the daemon is told as events are stored: given at construction, so that none
    /// changes under a running publisher.
    public struct Hooks: Sendable {
        /// Called after each `publish` given states, with nil when they were saved and
        /// otherwise why not (the store failed, or is failing and was not tried).
        public let onStates: (@Sendable (EngineSnapshot, (any Error)?) -> Void)?
        /// Called (on the storing thread) each time held events have been stored.
        public let onHeldStored: (@Sendable () -> Void)?
        /// Called (on the storing thread, in order) with each batch of events newly held and
        /// the ids of any the bound dropped (not for `adoptHeld`): what the daemon copies
        /// outside the full disk, so that a crash while it is full loses none.
        public let onHold: (@Sendable (_ held: [StateStore.StoredEvent], _ droppedIDs: [String]) -> Void)?

        public init(
            onStates: (@Sendable (EngineSnapshot, (any Error)?) -> Void)? = nil,
            onHeldStored: (@Sendable () -> Void)? = nil,
            onHold: (@Sendable (_ held: [StateStore.StoredEvent], _ droppedIDs: [String]) -> Void)? = nil
        ) {
            (self.onStates, self.onHeldStored, self.onHold) = (onStates, onHeldStored, onHold)
        }
    }

    private var listeners: [@Sendable ([StateStore.StoredEvent], Timestamp) -> Void] = []

    /// Measurements alone (ranging, proximity: `EventClass.measurement`) are written at most
    /// this often: held back and written with the next ones, or at once before the next alert
    /// or saved state, in order. Why: each engine turn that made one was a transaction of its
    /// own, rewriting the history's and its indexes' last pages (issue 53). An alert is never
    /// held back; positions are never written (`EventClass.position`).
    public static let groupWindow = TimeSpan.seconds(1)

    /// A position, with its asset: what an output conflates by.
    public typealias Position = (asset: String, event: StateStore.StoredEvent)

    /// Events held back for `groupWindow` (measurements, and any position after them, so that
    /// everyone is told in order), and since when.
    private let group = Mutex<(events: [StateStore.StoredEvent], positions: [Position], since: Timestamp?)>(
        ([], [], nil))

    /// `gateway`: the events' `source` is `beacond://<gateway>`; in a site, the site's id, so
    /// that every gateway's events of the site say the same source (SPEC §6.3).
    public init(
        gateway: String, store: StateStore?, workers: [WebhookWorker], echo: Bool,
        clock: @escaping @Sendable () -> Timestamp, logger: Logger, hooks: Hooks = Hooks()
    ) {
        self.hooks = hooks
        self.gateway = gateway
        self.store = store
        workerList = Mutex(workers)
        self.echo = echo
        self.clock = clock
        self.logger = logger
        ids = Mutex(EventIDGenerator(nonce: UInt32.random(in: .min ... .max)))
    }

    /// Adds an output that sees every stored batch (the live stream, a site's hand-over), with
    /// the time it was enqueued for the webhooks. Call before events flow.
    public func addListener(_ listener: @escaping @Sendable ([StateStore.StoredEvent], Timestamp) -> Void) {
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

    /// Called on the engine's thread with each batch, in order, and with the engine's states
    /// when they are to be saved and the zone transitions the turn released: stored with the
    /// events in one transaction (see `onStates`). Positions are not stored (SPEC §4.4): the
    /// history keeps them in memory and the outputs conflate them.
    public func publish(_ events: [Event], states: EngineSnapshot? = nil, transitions: [ZoneTransition] = []) {
        guard !events.isEmpty || states != nil || !transitions.isEmpty else { return }
        var stored: [StateStore.StoredEvent] = []
        var positions: [Position] = []
        stored.reserveCapacity(events.count)
        var writes = states != nil
        for event in events {
            let id = ids.withLock { $0.next(for: event.time) }
            let json = CloudEvent.text(event, id: id, gatewayID: gateway)
            let type = "beacond." + event.payload.kind
            let key = SiteDecision.handedOver(type: type) ? HandOverKey(payload: event.payload) : nil
            let e = StateStore.StoredEvent(id: id, type: type, time: event.time, body: json, key: key)
            stored.append(e)
            // The class decides (`EventClass`); a position's subject is its asset, what the
            // outputs conflate by.
            if EventClass(event.payload).isState {
                positions.append((CloudEvent.subject(event.payload), e))
            } else {
                writes = true
            }
        }
        byType.withLock { counts in for e in stored { counts[e.type, default: 0] += 1 } }
        let now = clock()
        let deferrable =
            states == nil && transitions.isEmpty && events.allSatisfy { EventClass($0.payload).isSuperseded }
        let batch = group.withLock { g -> (events: [StateStore.StoredEvent], positions: [Position])? in
            // Held back: measurements, within their window, and positions behind held ones.
            if deferrable, store != nil, g.since.map({ now - $0 < Self.groupWindow }) ?? writes {
                g.since = g.since ?? now
                g.events += stored
                g.positions += positions
                return nil
            }
            defer { g = ([], [], nil) }
            return (g.events + stored, g.positions + positions)
        }
        guard let batch else { return }
        deliver(batch.events, positions: batch.positions, states: states, transitions: transitions, now: now)
    }

    /// Stores what is not a position, then tells everyone of all of it, in order: standard
    /// output, the listeners, the webhooks (a position goes to each in memory, `offer`).
    private func deliver(
        _ batch: [StateStore.StoredEvent], positions: [Position], states: EngineSnapshot?,
        transitions: [ZoneTransition] = [], now: Timestamp
    ) {
        let durable = positions.isEmpty ? batch : batch.filter { !EventClass(type: $0.type).isState }
        let (routed, saved) = storeDurably(durable, states: states, transitions: transitions, now: now)
        if let states, let saved { hooks.onStates?(states, saved.error) }
        if !positions.isEmpty, let store {
            store.remember(positions.map(\.event))
            for worker in workers { worker.offer(positions, at: now) }
        }
        told(batch, routed: routed, now: now)
    }

    /// What was stored (or held) goes to standard output, the listeners and the webhooks.
    private func told(_ batch: [StateStore.StoredEvent], routed: Bool, now: Timestamp) {
        guard !batch.isEmpty else { return }
        if echo { writeAll(fd: 1, batch.map { $0.body + "\n" }.joined()) }
        for listener in listeners { listener(batch, now) }
        if routed { for worker in workers { worker.notify() } }
    }

    /// Writes the events held back, when `groupWindow` has passed (or at once with `force`,
    /// at the stop): the engine's loop calls this every turn, at least once a second.
    private func flushGroup(force: Bool) {
        let now = clock()
        let batch = group.withLock { g -> (events: [StateStore.StoredEvent], positions: [Position]) in
            guard let since = g.since, force || now - since >= Self.groupWindow else { return ([], []) }
            defer { g = ([], [], nil) }
            return (g.events, g.positions)
        }
        guard !batch.events.isEmpty else { return }
        deliver(batch.events, positions: batch.positions, states: nil, now: now)
    }

    /// Writes the superseded events held back once their `groupWindow` has passed, and stores
    /// what the state store could not take before, if it is time to try again (the engine's
    /// loop calls this every turn, so a quiet site's events are not left waiting for the next
    /// event). With `now`, both without waiting (at the stop).
    public func retryHeld(now force: Bool = false) {
        flushGroup(force: force)
        if force { durable.withLock { $0.nextAttempt = nil } }
        if storeDurably([], states: nil, transitions: [], now: clock()).routed {
            for worker in workers { worker.notify() }
        }
    }

    /// Events held in memory because the state store could not write them, and those given
    /// up on since the daemon started (`HeldEvents`).
    public var held: (events: Int, dropped: Int) { durable.withLock { ($0.held.events.count, $0.droppedTotal) } }

    /// Holds events an earlier run could not store, before any of this run's; stored and
    /// routed to the webhooks at the next write. Call before events flow.
    public func adoptHeld(_ events: [StateStore.StoredEvent]) {
        durable.withLock { d in
            let later = d.held.events
            d.held = HeldEvents()
            d.held.hold(events + later)
            d.nextAttempt = nil
        }
    }

    /// Why states were not saved: the store is failing, and is not tried again before
    /// `retryInterval` has passed since it last failed.
    public struct NotTried: Error, CustomStringConvertible {
        public var description: String { "the state store is failing; tried again within 5 s" }
    }

    /// While the store fails, a write is tried at most this often.
    public static let retryInterval = TimeSpan.seconds(5)

    struct Durability {
        var held = HeldEvents()
        var episode = FailureEpisode()
        var nextAttempt: Timestamp?
        var droppedTotal = 0
        /// Zone transitions (SPEC §8) the store could not take, written with the next write:
        /// in memory only (they are not alerts), the oldest forgotten past `transitionLimit`.
        var heldTransitions: [ZoneTransition] = []
    }

    /// Zone transitions held at most while the store cannot write: a day of 1,000 assets
    /// changing zone every five minutes.
    static let transitionLimit = 300_000

    /// What came of saving states: nil error when they were saved.
    struct StatesSaved {
        var error: (any Error)?
    }

    /// Writes `fresh` events, after any held ones, to the history and the webhooks' outboxes,
    /// and `states` and `transitions` (after any held), in one transaction. When the store cannot write (a full disk), the events
    /// are held in memory in order (and copied by `onHold`) and written, with what comes after
    /// them, once it can: nothing made while the disk was full is lost unless the hold
    /// overflows. `routed` when a webhook got events; `saved` when states were given.
    private func storeDurably(
        _ fresh: [StateStore.StoredEvent], states: EngineSnapshot?, transitions freshTransitions: [ZoneTransition],
        now: Timestamp
    ) -> (routed: Bool, saved: StatesSaved?) {
        guard let store else { return (false, nil) }
        let workers = self.workers
        return durable.withLock { d in
            let transitions = d.heldTransitions + freshTransitions
            if !d.held.isEmpty, let next = d.nextAttempt, now < next {
                hold(fresh, in: &d)
                holdTransitions(transitions, in: &d)
                return (false, states.map { _ in StatesSaved(error: NotTried()) })
            }
            let batch = d.held.isEmpty ? fresh : d.held.events + fresh
            // Held transitions wait for the next write; fresh ones make one.
            guard !batch.isEmpty || states != nil || !freshTransitions.isEmpty else { return (false, nil) }
            var routed = false
            do {
                // Alerts reach the disk before anyone is told of them; ranging and proximity,
                // superseded within seconds, do not wait for an fsync each.
                let synced = batch.contains { !EventClass(type: $0.type).isSuperseded }
                try store.commit(
                    batch, at: now, synced: synced,
                    webhooks: { event in
                        let targets = workers.filter { !$0.isDisabled && $0.settings.events.matches(type: event.type) }
                        if !targets.isEmpty { routed = true }
                        return targets.map(\.settings.id)
                    }, regions: states?.regions, assets: states?.assets, transitions: transitions,
                    final: states?.final ?? false)
                d.heldTransitions = []
            } catch {
                holdTransitions(transitions, in: &d)
                // States alone: the daemon tells of their failure (`onStates`).
                guard !batch.isEmpty else { return (false, StatesSaved(error: error)) }
                if d.episode.failed(at: now) {
                    logger.error(
                        "state.write_failed",
                        metadata: [
                            "error": "\(error)",
                            "next": """
                            events are held in memory (at most \(HeldEvents.limit)) and stored when the state \
                            store can write again; \(store.remedy(for: error))
                            """,
                        ])
                }
                hold(fresh, in: &d)
                d.nextAttempt = now + Self.retryInterval
                return (false, states.map { _ in StatesSaved(error: error) })
            }
            let saved = states.map { _ in StatesSaved(error: nil) }
            guard !batch.isEmpty else { return (false, saved) }
            d.nextAttempt = nil
            let heldStored = !d.held.isEmpty
            if let took = d.episode.succeeded(at: now) {
                logger.info(
                    "state.write_recovered",
                    metadata: [
                        "stored": "\(batch.count)", "dropped": "\(d.held.dropped)",
                        "after_s": "\(Int(took.seconds.rounded()))",
                    ])
            }
            _ = d.held.clear()
            if heldStored { hooks.onHeldStored?() }
            return (routed, saved)
        }
    }

    private func holdTransitions(_ transitions: [ZoneTransition], in d: inout Durability) {
        d.heldTransitions = transitions.suffix(Self.transitionLimit)
    }

    private func hold(_ fresh: [StateStore.StoredEvent], in d: inout Durability) {
        let droppedBefore = d.held.dropped
        let droppedIDs = d.held.hold(fresh)
        d.droppedTotal += d.held.dropped - droppedBefore
        if !fresh.isEmpty || !droppedIDs.isEmpty { hooks.onHold?(fresh, droppedIDs) }
        if droppedBefore == 0 && d.held.dropped > 0 {
            logger.error(
                "state.events_dropped",
                metadata: [
                    "held": "\(HeldEvents.limit)",
                    "next":
                        "the state store has not written for \(Int((clock() - (d.episode.since ?? clock())).seconds.rounded())) s; the oldest ranging and proximity events go first, then the oldest of the rest",
                ])
        }
    }
}
