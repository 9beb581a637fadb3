import BeaconConfig
import BeaconCore
import BeaconRuntime
import Dispatch
import Logging
import Storage
import Synchronization

/// Reads the whole state file once the daemon is ready, and then once a day, on a thread of
/// its own (`StateStore.verify`): damage in pages nothing reads for a while is found and
/// mended while the daemon can still carry over what reads, instead of at a restart that sets
/// the whole file aside.
final class StateVerifier: DaemonService, Sendable {
    let name = "state-verifier"
    /// Between two reads of the whole state file.
    static let every = TimeSpan.hours(24)
    /// How often a file not open yet (`LiveDaemon.openStore`) is looked at again.
    static let openRetry = TimeSpan.seconds(5)
    private let store: StateStore
    private let logger: Logger
    private let wake = DispatchSemaphore(value: 0)
    private let stopRequested = Atomic<Bool>(false)
    private let threads = ServiceThreads()

    init(store: StateStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    func start() throws { threads.spawn(named: "beacond-verify") { [self] in run() } }

    /// `history:` changed: the store keeps the new amounts from its next write on.
    func apply(_ reload: ConfigReload, from old: Config) -> Logger.Metadata {
        guard reload.running.history != old.history else { return [:] }
        store.setRetention(reload.running.history)
        return ["history": "changed"]
    }

    /// Waits for a read in progress to end (a quick check takes about a second on a large file).
    func stop() {
        stopRequested.store(true, ordering: .relaxed)
        wake.signal()
        threads.join()
    }

    private func run() {
        while !stopRequested.load(ordering: .relaxed) {
            // A file not open yet is read once it opens, not failed daily.
            if store.openFailure != nil {
                sleep(Self.openRetry)
                continue
            }
            let started = BootClock.elapsed()
            switch store.verify() {
            case .whole:
                let took = (BootClock.elapsed().nanoseconds - started.nanoseconds) / 1_000_000
                logger.info("state.verified", metadata: ["result": "whole", "took_ms": "\(took)"])
            case .emptied: break  // the recovery's report said so (state.corrupt_while_running)
            case let .failed(reason): logger.warning("state.verify_failed", metadata: ["error": "\(reason)"])
            }
            sleep(Self.every)
        }
    }

    /// Waits `span`, or less if stopped.
    private func sleep(_ span: TimeSpan) {
        _ = wake.wait(timeout: .now() + .nanoseconds(Int(span.nanoseconds)))
    }
}
