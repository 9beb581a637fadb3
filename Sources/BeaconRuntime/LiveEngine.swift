import BeaconCore
import Dispatch
import Synchronization

/// Runs the engine live: takes sightings and adapter changes from any thread, and fires the
/// engine's timers on the daemon's clock whether or not anything arrives.
///
/// Inputs are queued under a lock and handled in batches by `run()`'s thread; the producer
/// (the D-Bus thread) never waits for the engine, and a flood of sightings cannot starve the
/// timers: every turn ends with `advance(to: now)`.
/// `@unchecked Sendable`: `BeaconEngine` (with its receivers' tallies) is touched on the engine's
/// thread only (`perform` runs there too); inputs and the glance others read are behind locks.
public final class LiveEngine: @unchecked Sendable {
    public enum Input: Sendable {
        case sightings([Sighting])
        /// An event from outside the engine (adapter changes), published in order with the rest.
        case external(Event)
        /// Work on the engine's thread (API requests): reads state or changes regions, and
        /// returns the events it caused, published in order with the rest.
        case call(@Sendable (inout BeaconEngine, Timestamp) -> [Event])
    }

    private let queue = Mutex(Pending())
    /// Inputs waiting for the engine's thread, and how many sightings they hold.
    struct Pending {
        var inputs: [Input] = []
        var sightings = 0
    }

    /// The most sightings that may wait for the engine. An engine that falls behind (a slow
    /// gateway given too many tags, a disk that stalls its writes) would otherwise queue what
    /// the radios hear until the kernel kills the daemon; past this, new batches are dropped
    /// and counted (`sightingsShed`), and the engine catches up on what it has. About 10 MB
    /// at the most, and some seconds of what radios hear; the engine takes it in well under
    /// a second when it is not stalled.
    public static let queuedSightingsLimit = 50_000
    /// Sightings dropped because `queuedSightingsLimit` were already waiting.
    public let sightingsShed = Atomic<Int>(0)
    public var shedCount: Int { sightingsShed.load(ordering: .relaxed) }
    /// Visits begun in each zone since the start (`beacond_zone_visits_total`), from the
    /// transitions the analytics keep: the visits the roll-ups count (SPEC §10).
    private let zoneVisitCounts = Mutex<[String: Int]>([:])
    public var zoneVisits: [String: Int] { zoneVisitCounts.withLock { $0 } }
    private let wake = DispatchSemaphore(value: 0)
    private let stopRequested = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)
    /// Sightings the engine has processed, for metrics and benchmarks.
    public let sightingsIngested = Atomic<Int>(0)
    private let timingState = Mutex(Timing())

    /// How much time the engine's turns take, for `/metrics` (measured on the daemon's clock).
    public struct Timing: Sendable {
        public var turns = 0
        public var busy = TimeSpan(nanoseconds: 0)
        public var lastTurn = TimeSpan(nanoseconds: 0)
    }

    public var timing: Timing { timingState.withLock { $0 } }

    /// What the engine says of itself for `/v1/status` and `/metrics`: asked on its thread
    /// when it answers, else as it was at the end of its last turn. A daemon whose engine is
    /// stuck is when an operator most needs them to answer, and to say since when.
    public struct Glance: Sendable {
        public var counters: EngineCounters
        public var beacons: Int
        public var clients: Int
        public var unplacedReceivers: [String: Int]
        /// Asset × zone pairs flapping now (`zone.flapping`).
        public var flapping: Int
        /// Each receiver's sightings and when it was last heard (`BeaconEngine.tally`), by name:
        /// made when asked, from the table kept at the turn.
        public var receivers: [String: ReceiverTally] { BeaconEngine.byName(receiverTable) }
        private var receiverTable: (names: [String], tallies: [ReceiverTally])
        /// When the engine last answered or ended a turn (nil: neither yet).
        public var lastTurn: Timestamp?
        /// The same moment as time since boot (`LiveEngine.elapsed`), when the daemon gives it:
        /// what the turn's age is measured on, so that a step of the wall clock is not taken
        /// for an engine that stopped running.
        var lastTurnElapsed: TimeSpan?

        init(_ engine: BeaconEngine, lastTurn: Timestamp?, elapsed: TimeSpan? = nil) {
            counters = engine.counters
            beacons = engine.beaconCount
            clients = engine.clientIDs.count
            unplacedReceivers = engine.tracker?.unplacedReceivers ?? [:]
            flapping = engine.tracker?.flappingNow ?? 0
            receiverTable = engine.receiverTable
            self.lastTurn = lastTurn
            lastTurnElapsed = elapsed
        }
    }

    private let glanceState: Mutex<Glance>
    /// As of the end of the last turn, without waiting.
    public var glance: Glance { glanceState.withLock { $0 } }

    /// As of now, when the engine answers within `timeout` (so that what was queued before
    /// this call is counted); else as of the end of its last turn.
    public func glance(waiting timeout: TimeSpan) -> Glance {
        let elapsed = hooks.elapsed
        return perform(timeout: timeout) { [self] engine, now in
            (Glance(engine, lastTurn: now, elapsed: elapsed?()), [])
        } ?? glance
    }

    /// How long ago the engine last ended a turn or answered (nil: never yet). Measured on
    /// `elapsed` when it is set: NTP setting a gateway's clock forward between two turns is
    /// not time the engine stood still, and must not turn the API's engine requests into
    /// "the engine has not run" 503s until the next turn.
    public func timeSinceLastTurn(now: Timestamp) -> TimeSpan? {
        let last = glance
        if let turned = last.lastTurnElapsed, let elapsed = hooks.elapsed {
            return TimeSpan(nanoseconds: elapsed().nanoseconds - turned.nanoseconds)
        }
        return last.lastTurn.map { now - $0 }
    }

    /// How the engine tells wall-clock steps from time passing, fixed at construction.
    public let hooks: Hooks

    /// How the engine tells wall-clock steps from time passing: given at construction, so that
    /// the API's threads (`timeSinceLastTurn`) and the engine's read the same, unchanging value.
    public struct Hooks: Sendable {
        /// Time since boot (`CLOCK_BOOTTIME`), which a setting of the wall clock does not move:
        /// with it a step of `clock` shifts the engine instead of passing as time.
        public let elapsed: (@Sendable () -> TimeSpan)?
        /// Told of every step of the wall clock the engine was shifted by (for the log).
        public let onClockStep: (@Sendable (TimeSpan) -> Void)?

        public init(
            elapsed: (@Sendable () -> TimeSpan)? = nil, onClockStep: (@Sendable (TimeSpan) -> Void)? = nil
        ) {
            (self.elapsed, self.onClockStep) = (elapsed, onClockStep)
        }
    }

    private var steps = ClockStepDetector()
    private var engine: BeaconEngine
    private let clock: @Sendable () -> Timestamp
    private let commit: @Sendable ([Event], EngineSnapshot?, [ZoneTransition]) -> Void
    private let savesState: Bool
    private var lastPersisted: Timestamp?
    /// Region states and assets' zones are saved at least this often (last-seen times move on
    /// every sighting), and at once after any region or zone event (an enter must not be
    /// forgotten by a crash).
    public static let persistInterval = TimeSpan.seconds(5)

    /// - Parameters:
    ///   - clock: the daemon's clock (`CLOCK_REALTIME` in production).
    ///   - publish: receives every event batch, in order, on the engine's thread.
    ///   - persist: receives every region's state and every asset's zones to save, on the
    ///     engine's thread.
    public convenience init(
        engine: BeaconEngine, clock: @escaping @Sendable () -> Timestamp,
        hooks: Hooks = Hooks(), publish: @escaping @Sendable ([Event]) -> Void,
        persist: (@Sendable (EngineSnapshot) -> Void)? = nil
    ) {
        self.init(engine: engine, clock: clock, savingState: persist != nil, hooks: hooks) { events, state, _ in
            if !events.isEmpty { publish(events) }
            if let state { persist?(state) }
        }
    }

    /// - Parameters:
    ///   - savingState: whether the engine's states are handed to `commit` to be saved.
    ///   - commit: receives each turn's events, in order, on the engine's thread, and with
    ///     them the region states and assets' zones to save when they are due: the daemon
    ///     writes both in one transaction, so that a crash cannot keep an alert and lose the
    ///     state it moved to (`StateStore.commit`). With them, apart, the zone transitions
    ///     the turn released (SPEC §8): in a busy store that is every tick, and when they rode
    ///     in the snapshot each forced a full one (issue 54: 60 saves a minute instead of 12
    ///     at 1,000 tags, BENCHMARKS.md).
    public init(
        engine: BeaconEngine, clock: @escaping @Sendable () -> Timestamp, savingState: Bool, hooks: Hooks = Hooks(),
        commit:
            @escaping @Sendable (_ events: [Event], _ state: EngineSnapshot?, _ transitions: [ZoneTransition]) ->
            Void
    ) {
        self.hooks = hooks
        self.engine = engine
        glanceState = Mutex(Glance(engine, lastTurn: nil))
        self.clock = clock
        self.commit = commit
        savesState = savingState
    }

    /// Queues an input for the engine's thread. False when it was a batch of sightings and
    /// `queuedSightingsLimit` were already waiting: the batch was dropped (and counted).
    @discardableResult
    public func submit(_ input: Input) -> Bool {
        let shed = queue.withLock { pending -> Int in
            if case let .sightings(batch) = input {
                guard pending.sightings + batch.count <= Self.queuedSightingsLimit else { return batch.count }
                pending.sightings += batch.count
            }
            pending.inputs.append(input)
            return 0
        }
        if shed > 0 { sightingsShed.add(shed, ordering: .relaxed) }
        wake.signal()
        return shed == 0
    }

    public func stop() {
        stopRequested.store(true, ordering: .relaxed)
        wake.signal()
    }

    /// Handles queued inputs, then fires every timer due by `now`. One turn of `run()`,
    /// exposed so the logic can be driven with explicit times. With `elapsed` (time since
    /// boot, read with `now`), a step of the wall clock since the last turn shifts the engine
    /// first (`BeaconEngine.shiftClock`).
    public func turn(now: Timestamp, elapsed: TimeSpan? = nil) {
        if let elapsed, let step = steps.step(wall: now, elapsed: elapsed) {
            engine.shiftClock(by: step)
            hooks.onClockStep?(step)
        }
        let inputs = queue.withLock { pending -> [Input] in
            defer {
                pending.inputs.removeAll(keepingCapacity: true)
                pending.sightings = 0
            }
            return pending.inputs
        }
        var events: [Event] = []
        for input in inputs {
            switch input {
            case let .sightings(batch):
                engine.prepare(batch)
                for sighting in batch { events += engine.ingest(sighting, notAfter: now) }
                sightingsIngested.add(batch.count, ordering: .relaxed)
                engine.tally(batch)
            case let .external(event):
                events += engine.advance(to: event.time)
                events.append(event)
            case let .call(body):
                events += engine.advance(to: now)
                events += body(&engine, now)
            }
        }
        events += engine.advance(to: now)
        var state: EngineSnapshot?
        var transitions: [ZoneTransition] = []
        if savesState {
            let stateChanged = events.contains {
                switch $0.payload {
                case .regionState, .regionEnter, .regionExit, .regionDwell, .zone, .tag: return true
                case .regionFailed, .ranging, .beaconProximity, .adapterState, .assetPosition, .zoneVisit: return false
                }
            }
            transitions = engine.takeZoneTransitions()
            if !transitions.isEmpty {
                zoneVisitCounts.withLock { counts in
                    for t in transitions where t.entered && t.visit { counts[t.zone, default: 0] += 1 }
                }
            }
            if stateChanged || lastPersisted.map({ now - $0 >= Self.persistInterval }) ?? true {
                state = engine.savedState()
                lastPersisted = now
            }
        }
        if !events.isEmpty || state != nil || !transitions.isEmpty { commit(events, state, transitions) }
    }

    /// Loops until `stop()`: waits for input or the engine's next deadline, then takes a turn.
    /// It waits at most `maxIdleWait` with nothing to do (shorter under a fast watchdog), and
    /// calls `onTurn` on the engine's thread after every turn (at least once a second): the
    /// watchdog's proof that the engine itself, not just the process, is alive.
    public func run(maxIdleWait: TimeSpan = .seconds(1), onTurn: (@Sendable (Timestamp) -> Void)? = nil) {
        let elapsed = hooks.elapsed
        while !stopRequested.load(ordering: .relaxed) {
            let now = clock()
            let idle = maxIdleWait.nanoseconds
            let wait = engine.nextDeadline.map { max(0, ($0 - now).nanoseconds) } ?? idle
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(min(wait, idle))))
            let started = clock()
            turn(now: started, elapsed: elapsed?())
            let took = clock() - started
            timingState.withLock {
                $0.turns += 1
                $0.busy = TimeSpan(nanoseconds: $0.busy.nanoseconds + took.nanoseconds)
                $0.lastTurn = took
            }
            let glance = Glance(engine, lastTurn: started + took, elapsed: elapsed?())
            glanceState.withLock { $0 = glance }
            onTurn?(started + took)
        }
        turn(now: clock(), elapsed: elapsed?())
        if savesState {
            var last = engine.savedState()
            engine.releaseAllZoneTransitions()
            last.final = true
            commit([], last, engine.takeZoneTransitions())
        }
        finished.store(true, ordering: .relaxed)
        // Anyone still waiting in perform() gets an answer.
        let late = queue.withLock { pending -> [Input] in
            defer { pending = Pending() }
            return pending.inputs
        }
        for case let .call(body) in late { _ = body(&engine, clock()) }
    }

    /// Runs `body` on the engine's thread at the engine's current time and returns its
    /// result; the events it returns are published like any others. Nil when the engine has
    /// stopped or does not answer within `timeout`.
    public func perform<T: Sendable>(
        timeout: TimeSpan = .seconds(5), _ body: @escaping @Sendable (inout BeaconEngine, Timestamp) -> (T, [Event])
    ) -> T? {
        guard !finished.load(ordering: .relaxed) else { return nil }
        let result = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        submit(
            .call { engine, now in
                let (value, events) = body(&engine, now)
                result.withLock { $0 = value }
                done.signal()
                return events
            })
        guard done.wait(timeout: .now() + .nanoseconds(Int(timeout.nanoseconds))) == .success else { return nil }
        return result.withLock { $0 }
    }

    /// Whether `run()` has ended: calls are no longer taken.
    public var hasFinished: Bool { finished.load(ordering: .relaxed) }

    /// The engine's counters; read after `run()` has returned.
    public var counters: EngineCounters { engine.counters }
    public var beaconCount: Int { engine.beaconCount }

}
