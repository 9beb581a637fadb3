import ArgumentParser
import BeaconConfig
import BeaconCore
import BeaconRuntime
import POSIX
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A running total (sightings shed, beacons evicted) told in the log as it grows: at once,
/// then at most once a minute with the sum since (`LogSummary`).
final class RunningTotalLog: Sendable {
    private let state = Mutex((told: 0, summary: LogSummary()))

    func report(total: Int, at t: Timestamp) -> LogSummary.Report? {
        state.withLock { s in
            defer { s.told = total }
            return s.summary.add(total - s.told, at: t)
        }
    }
}
