import BeaconCore
import Synchronization

/// What a service takes out of the engine on the engine's thread (the heat the analytics
/// write each 30 s), kept here until it is written — so a call that outlives its caller's wait
/// loses nothing.
///
/// Why: `LiveEngine.perform` gives up waiting after its timeout, but the call stays queued and
/// runs when the engine gets to it; a call that took the heat and handed it to a result no one
/// read emptied it for nothing (issue 51, item 6). Here the call adds what it took to the
/// carry, and whoever collects next gets it. At most one call is queued at a time: an engine
/// that is behind is not handed another while one waits.
public final class CarriedTake<Value: Sendable>: Sendable {
    private let carry: Mutex<Value>
    private let empty: Value
    private let merge: @Sendable (inout Value, Value) -> Void
    private let queued = Atomic<Bool>(false)

    public init(empty: Value, merge: @escaping @Sendable (inout Value, Value) -> Void) {
        (self.empty, self.merge) = (empty, merge)
        carry = Mutex(empty)
    }

    /// Whether a call is still waiting for the engine.
    public var isQueued: Bool { queued.load(ordering: .acquiring) }

    /// Runs `take` on the engine's thread (unless a call is queued already), waiting up to
    /// `timeout`, then returns all that is carried — this call's, and what calls that ran late
    /// left — and empties the carry.
    public func collect(
        from engine: LiveEngine, timeout: TimeSpan, _ take: @escaping @Sendable (inout BeaconEngine) -> Value
    ) -> Value {
        if queued.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged {
            let done: Bool? = engine.perform(timeout: timeout) { [self] engine, _ in
                let taken = take(&engine)
                carry.withLock { merge(&$0, taken) }
                queued.store(false, ordering: .releasing)
                return (true, [])
            }
            // Stopped, and so never to run it: nothing is queued.
            if done == nil, engine.hasFinished { queued.store(false, ordering: .releasing) }
        }
        return carry.withLock { value in
            defer { value = empty }
            return value
        }
    }

    /// What was collected could not be written: kept for the next `collect`.
    public func putBack(_ value: Value) {
        carry.withLock { merge(&$0, value) }
    }
}
