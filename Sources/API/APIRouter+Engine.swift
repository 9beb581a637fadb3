import BeaconCore
import BeaconRuntime
import HTTPServer

/// How a request reaches the engine. The API serves every client on one thread, so a request
/// that waits for the engine holds up every other one — status, metrics, live streams. It
/// therefore waits at most `engineWait`, and not at all when the engine has not run for
/// `engineStuckAfter` (it turns at least once a second while it runs): a stuck engine is told
/// at once, with how long it has been stuck, and the rest of the API stays live around it.
extension APIRouter {
    /// The longest a request waits for the engine's answer.
    static let engineWait = TimeSpan.seconds(2)
    /// An engine that has not finished a turn for this long is stuck: requests do not wait.
    static let engineStuckAfter = TimeSpan.seconds(3)

    /// Runs `body` on the engine's thread; nil when the engine is stuck, stopping or did not
    /// answer in time (`engineUnavailable()` says which).
    func onEngine<T: Sendable>(_ body: @escaping @Sendable (inout BeaconEngine, Timestamp) -> (T, [Event])) -> T? {
        if stuckFor() != nil { return nil }
        return context.engine.perform(timeout: Self.engineWait, body)
    }

    /// The engine's counts for status and metrics: as of now, or as of its last turn when it
    /// is stuck or does not answer within a second.
    func currentGlance() -> LiveEngine.Glance {
        stuckFor() != nil ? context.engine.glance : context.engine.glance(waiting: .seconds(1))
    }

    /// 503 for a request the engine could not answer, saying why.
    func engineUnavailable() -> HTTPReply {
        if let stuck = stuckFor() {
            return Reply.error(
                503, "engine_unavailable",
                "the engine has not run for \(Int(stuck.seconds.rounded())) s (last turn "
                    + "\(RFC3339.format(context.engine.glance.lastTurn ?? context.started))); not waiting for it: "
                    + "see beaconctl doctor, and systemd's watchdog restarts it")
        }
        return Reply.error(
            503, "engine_unavailable",
            "the engine did not answer within \(Self.engineWait) (stopping or overloaded)")
    }

    /// How long the engine has not run, when that is past `engineStuckAfter`.
    private func stuckFor() -> TimeSpan? {
        guard let age = context.engine.timeSinceLastTurn(now: context.clock()) else { return nil }
        return age >= Self.engineStuckAfter ? age : nil
    }
}
