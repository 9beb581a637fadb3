import BeaconCore
import BeaconRuntime
import Foundation
import Synchronization
import TestSupport
import Testing

/// Issue 51, item 6: the analytics' heat was taken by an engine call that outlived its wait,
/// into a result no one read — lost. `CarriedTake` keeps what a late call took for the next
/// collect, and queues no second call while one waits.
@Suite struct CarriedTakeTests {
    static let start = Timestamp.seconds(1_763_805_600)

    @Test func whatALateCallTookIsCollectedNextAndNoCallIsQueuedTwice() throws {
        let live = LiveEngine(
            engine: BeaconEngine(configuration: EngineConfiguration(), start: Self.start), clock: { Self.start },
            publish: { _ in })
        let calls = Atomic<Int>(0)
        let carried = CarriedTake(empty: 0) { $0 += $1 }
        let take: @Sendable (inout BeaconEngine) -> Int = { _ in
            calls.add(1, ordering: .relaxed)
            return 5
        }
        // The engine is not running yet: the call waits, and the collect gets nothing.
        #expect(carried.collect(from: live, timeout: .milliseconds(50), take) == 0)
        #expect(carried.isQueued)
        #expect(carried.collect(from: live, timeout: .milliseconds(50), take) == 0, "a second call was queued")
        let thread = Thread { live.run(maxIdleWait: .milliseconds(20)) }
        thread.start()
        defer { live.stop() }
        try eventually("the late call to run") { !carried.isQueued }
        #expect(calls.load(ordering: .relaxed) == 1)
        // The late call's 5, and this call's.
        #expect(carried.collect(from: live, timeout: .seconds(5), take) == 10)
        #expect(calls.load(ordering: .relaxed) == 2)
        // What could not be written is collected with the next.
        carried.putBack(7)
        #expect(carried.collect(from: live, timeout: .seconds(5), take) == 12)
    }
}
