import BeaconCore
import Synchronization
import Testing

@testable import BeaconRuntime

/// An engine that falls behind does not queue what the radios hear without bound: past
/// `queuedSightingsLimit` waiting sightings, new batches are dropped and counted, while API
/// calls and adapter changes still queue; once the engine takes its turn, sightings are
/// accepted again.
@Suite struct EngineBacklogTests {
    @Test func sightingsPastTheLimitAreShedAndCounted() {
        let start = Timestamp.seconds(1_763_805_600)
        let live = LiveEngine(
            engine: BeaconEngine(configuration: EngineConfiguration(), start: start), clock: { start },
            publish: { _ in })
        let batch = (0..<1_000).map { _ in LiveEngineClockTests.sighting(start) }
        let batches = LiveEngine.queuedSightingsLimit / batch.count + 10
        let taken = (0..<batches).map { _ in live.submit(.sightings(batch)) }
        #expect(taken.filter { !$0 }.count == 10, "the submitter is told")
        #expect(live.shedCount == 10 * batch.count)
        let called = Mutex(false)
        live.submit(
            .call { _, _ in
                called.withLock { $0 = true }
                return []
            })

        live.turn(now: start)
        #expect(live.sightingsIngested.load(ordering: .relaxed) == LiveEngine.queuedSightingsLimit)
        #expect(called.withLock { $0 }, "a call is never shed")
        live.submit(.sightings(batch))
        live.turn(now: start)
        #expect(live.sightingsIngested.load(ordering: .relaxed) == LiveEngine.queuedSightingsLimit + batch.count)
        #expect(live.shedCount == 10 * batch.count)
    }
}
