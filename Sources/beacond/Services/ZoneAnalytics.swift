import BeaconConfig
import BeaconCore
import BeaconRuntime
import Dispatch
import Logging
import Publishing
import Storage
import Synchronization

/// The zone analytics' writer (SPEC §8), on a thread of its own: every `every` it adds the
/// heat the engine gathered to the hour under way, and rolls the hours (and days) that have
/// ended into the state store (`ZoneRollup`). The transitions themselves are written by the
/// engine's turns, with the states they led to, once they have settled (a visit's enter is
/// known up to `VisitRules.settleTime` after it); this service only sums them, an hour that
/// long after it ended, so that every visit begun in it is counted in it. A `kill -9` loses
/// the transitions still settling: the next start makes the counting agree with the engine's
/// zones (`ZoneRollup.reconcile`).
final class ZoneAnalytics: DaemonService, Sendable {
    let name = "analytics"
    /// Stops before the engine does: the last heat is taken from a running engine.
    let startsAfter = ["engine"]
    static let every = TimeSpan.seconds(30)
    private let store: StateStore
    private let engine: LiveEngine
    private let publisher: EventPublisher
    private let clock: @Sendable () -> Timestamp
    private let retention: Mutex<TimeSpan>
    /// How long after an hour's end it is rolled: `VisitRules.settleTime`.
    private let settle: Mutex<TimeSpan>
    private let logger: Logger
    private let wake = DispatchSemaphore(value: 0)
    private let stopRequested = Atomic<Bool>(false)
    private let threads = ServiceThreads()
    private let failures = Mutex(FailureEpisode())
    /// The heat taken from the engine and not yet written: a take that outlived its wait, or a
    /// write that failed, is written with the next.
    private let heat = CarriedTake(empty: HeatMap()) { $0.merge($1) }
    /// Steps of the wall clock between ticks, told apart as the engine does.
    private let steps = Mutex(ClockStepDetector())
    /// A counting start queued on the engine and not yet run: not queued twice.
    private let startQueued = Atomic<Bool>(false)

    init(
        store: StateStore, engine: LiveEngine, publisher: EventPublisher, analytics: AnalyticsSettings,
        clock: @escaping @Sendable () -> Timestamp, logger: Logger
    ) {
        (self.store, self.engine, self.publisher, self.clock, self.logger) = (store, engine, publisher, clock, logger)
        retention = Mutex(analytics.retention)
        settle = Mutex(analytics.visits.settleTime)
    }

    func start() throws { threads.spawn(named: "beacond-analytics") { [self] in run() } }

    func stop() {
        stopRequested.store(true, ordering: .relaxed)
        wake.signal()
        threads.join()
    }

    /// `analytics.retention` changed: applied at the next roll.
    func apply(_ reload: ConfigReload, from old: Config) -> Logger.Metadata {
        guard reload.running.analytics != old.analytics else { return [:] }
        retention.withLock { $0 = reload.running.analytics.retention }
        settle.withLock { $0 = reload.running.analytics.visits.settleTime }
        return ["analytics": "changed"]
    }

    private func run() {
        while !stopRequested.load(ordering: .relaxed) {
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(Self.every.nanoseconds)))
            tick(now: clock(), elapsed: BootClock.elapsed())
        }
    }

    /// Heat to the hour under way, then every hour that ended rolled. Nothing is rolled while
    /// events are held (a full disk): the transitions held with them belong to those hours.
    /// Nor at a tick whose wall clock stepped since the last (`elapsed`: time since boot, as
    /// the engine tells steps apart): a clock a year ahead for one tick is not believed; one
    /// that stays is followed from the next tick, two days of hours a tick at most.
    func tick(now: Timestamp, elapsed: TimeSpan) {
        do {
            let taken = heat.collect(from: engine, timeout: .seconds(2)) { $0.takeHeatMap() }
            if let step = steps.withLock({ $0.step(wall: now, elapsed: elapsed) }) {
                heat.putBack(taken)
                logger.info(
                    "analytics.clock_stepped",
                    metadata: [
                        "step_s": "\(Int(step.seconds.rounded()))",
                        "next": "nothing rolled at this tick; from the next, if the clock stays, hours roll by it",
                    ])
                return
            }
            if !taken.isEmpty {
                do { try store.addHeat(taken, hour: ZoneBucketStats.hour(of: now)) } catch {
                    heat.putBack(taken)
                    throw error
                }
            }
            guard publisher.held.events == 0 else { return }
            guard
                try store.rollZones(
                    at: now, settle: settle.withLock { $0 }, keepAfter: now - retention.withLock { $0 }) != nil
            else {
                return try startCounting()
            }
            if let took = failures.withLock({ $0.succeeded(at: now) }) {
                logger.info("analytics.written_again", metadata: ["after_s": "\(Int(took.seconds.rounded()))"])
            }
        } catch {
            guard failures.withLock({ $0.failed(at: now) }) else { return }
            logger.error(
                "analytics.write_failed",
                metadata: [
                    "error": "\(error)",
                    "next": "the hours are rolled when the state store can write; no visit is lost meanwhile",
                ])
        }
    }
}

extension ZoneAnalytics {
    /// No mark yet: the state store opened after the start (or could not write then). Counting
    /// starts from the transitions stored since it opened, made to agree with the engine's
    /// zones — on the engine's thread, so that no turn commits between the reads.
    func startCounting() throws {
        let retention = retention.withLock { $0 }
        // One start at a time: a start that outlived its wait still runs, and a second queued
        // behind it would append its fixes again.
        guard startQueued.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        let result: Result<Int, StartFailed>? = engine.perform(timeout: .seconds(2)) {
            [self] engine, now in
            defer { startQueued.store(false, ordering: .releasing) }
            do {
                let stored = try store.zoneTransitions(after: 0)
                let last = stored.last?.seq ?? 0
                let pending = engine.pendingZoneTransitions.enumerated().map {
                    ZoneRollup.Stored(seq: last + Int64($0.offset) + 1, $0.element)
                }
                let mark = ZoneRollup(startingAt: min(stored.first?.transition.time ?? now, now), open: [])
                let fixes = ZoneRollup.ordered(
                    ZoneRollup.reconcile(
                        open: mark.openVisits(after: stored + pending), inside: engine.zoneVisitsUnderWay, at: now),
                    floors: ZoneRollup.floors((stored + pending).map(\.transition)))
                try store.appendTransitions(fixes)
                try store.saveRollup(mark, .init(), keepAfter: now - retention)
                return (.success(stored.count), [])
            } catch {
                return (.failure(StartFailed(reason: "\(error)")), [])
            }
        }
        switch result {
        case let .success(count)?:
            logger.info(
                "analytics.started", metadata: ["transitions": "\(count)", "reason": "the state store opened late"])
        case let .failure(failed)?: throw failed
        case nil:  // the engine is busy (the start runs when it gets to it) or has stopped
            if engine.hasFinished { startQueued.store(false, ordering: .releasing) }
        }
    }

    struct StartFailed: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }
}

extension LiveDaemon {
    /// Before the engine runs: the counting and the engine's zones made to agree (a first
    /// start counts the visits under way from their enter; a zone removed while stopped ends
    /// its visits now), and the engine told to keep its transitions from now on. After a
    /// `kill -9` (the changes still settling lost): a counted visit the history has told is
    /// closed at its told `left` rather than resumed and told again; every fix is stored in the
    /// order of its times and none before its zone's counting, and the visits the saved live
    /// state resumes begin no earlier than that (`ZoneRollup.restart`, issue 61).
    func startZoneAnalytics(store: StateStore, engine: inout BeaconEngine, at now: Timestamp) {
        engine.recordsZoneTransitions = true
        guard store.openFailure == nil else { return }
        do {
            let mark = try store.zoneRollupMark()
            let stored = try mark.map { try store.zoneTransitions(after: $0.throughSeq) } ?? []
            let counted = mark?.openVisits(after: stored) ?? []
            // The visits told since the counting's hour (or since the oldest it has open); none
            // without zones, when nothing at the start reads the history.
            let since =
                config.zones.isEmpty
                ? nil : ([mark?.nextHour].compactMap { $0 } + counted.filter(\.visit).map(\.entered)).min()
            let told = try since.map { try store.toldVisits(since: $0) } ?? []
            let restart = ZoneRollup.restart(
                counted: counted, told: told, enters: stored.map(\.transition),
                countedFrom: mark?.nextHour ?? Timestamp(nanoseconds: .max))
            engine.resumeCountedVisits(restart.resumed)
            let inside = engine.zoneVisitsUnderWay
            guard mark != nil else {
                try store.saveRollup(
                    ZoneRollup(
                        startingAt: now, open: inside, throughSeq: store.lastZoneTransitionSeq()),
                    .init(), keepAfter: now - config.analytics.retention)
                return
            }
            let reached = stored.map(\.transition)
            let fixes = ZoneRollup.ordered(
                restart.transitions + ZoneRollup.reconcile(open: restart.resumed, inside: inside, at: now),
                floors: ZoneRollup.floors(reached))
            try store.appendTransitions(fixes)
            engine.anchorRestoredVisits(from: ZoneRollup.floors(reached + fixes), closed: restart.closed)
            if !fixes.isEmpty {
                logger.info(
                    "analytics.reconciled",
                    metadata: [
                        "ended": "\(fixes.filter { !$0.entered }.count)", "begun": "\(fixes.filter(\.entered).count)",
                        "told_before": "\(restart.closed.count)", "told_uncounted": "\(restart.uncounted.count)",
                    ])
            }
        } catch {
            logger.error(
                "analytics.write_failed",
                metadata: ["error": "\(error)", "next": "counting starts within 30 s of the state store writing"])
        }
    }
}
