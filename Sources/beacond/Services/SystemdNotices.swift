import BeaconConfig
import BeaconCore
import BeaconRuntime
import BlueZ
import Dispatch
import POSIX
import Storage
import Synchronization
import Systemd

#if canImport(Glibc)
    import Glibc
#endif

/// What the daemon tells systemd: READY=1 once every other service has started, watchdog pings
/// from the engine's own loop (`engineTurned`), a status line every few seconds ("scanning
/// hci0, 412 beacons, outbox 0"), and STOPPING=1 first thing at the stop.
final class SystemdNotices: DaemonService, Sendable {
    let name = "systemd"
    /// READY=1 says the daemon serves: the API answers, the engine turns, the input hears.
    let startsAfter = ["api", "engine", "analytics", "bluez", "simulator", "site", "state-verifier"]
    static let statusInterval = TimeSpan.seconds(5)
    let notifier: ServiceNotifier
    private let engine: LiveEngine
    private let store: StateStore?
    private let adapters: AdapterStates
    /// "simulating 6 tags", or nil to say which adapters scan.
    private let simulated: String?
    private let lastStatus = Mutex<Timestamp?>(nil)
    private let wedgeAfter = SystemdNotices.faultWedgeEngineAfter()
    private let started = WallClock.now()
    /// The beacon count of a status line the engine asked for and the status thread has not written.
    private let statusDue = Mutex<Int?>(nil)
    private let statusWanted = DispatchSemaphore(value: 0)

    init(
        notifier: ServiceNotifier, engine: LiveEngine, store: StateStore?, adapters: AdapterStates, simulated: String?
    ) {
        self.notifier = notifier
        self.engine = engine
        self.store = store
        self.adapters = adapters
        self.simulated = simulated
    }

    /// How long the engine may wait idle: half the watchdog's interval at most, so that a ping
    /// is never late.
    var maxIdleWait: TimeSpan? {
        notifier.watchdogInterval.map { .milliseconds(max(10, min(1000, Int64($0 * 500)))) }
    }

    func start() throws {
        // Asked on the engine's thread: a count read there is one the engine has finished.
        let beacons = engine.perform { e, _ in (e.beaconCount, []) } ?? 0
        notifier.ready(status: statusLine(beacons: beacons))
        if notifier.underSystemd { writeStatusLines() }
    }

    func stop() { notifier.stopping() }

    /// On the engine's thread after every turn: the watchdog's proof that the engine itself,
    /// not just the process, is alive.
    func engineTurned(at now: Timestamp) {
        if let wedgeAfter, now - started >= wedgeAfter {
            // Fault injection for the watchdog test: the engine's thread stops here for good.
            while true { sleep(3600) }
        }
        notifier.engineAlive()
        let due = lastStatus.withLock { last -> Bool in
            guard last.map({ now - $0 >= Self.statusInterval }) ?? true else { return false }
            last = now
            return true
        }
        guard due, notifier.underSystemd else { return }
        // The line reads the outbox from SQLite: not on the engine's thread. The beacon count
        // is read here, where the engine is ours.
        statusDue.withLock { $0 = engine.beaconCount }
        statusWanted.signal()
    }

    /// Writes the status line when the engine asks, on a thread of its own rather than a
    /// dispatch queue: a block sent from the engine's thread makes libdispatch start a worker
    /// at the user-initiated QoS, which it renices to -4, refused to the daemon and logged
    /// ("Failed to set thread priority", see SignalWaiter).
    private func writeStatusLines() {
        detachThread(named: "beacond-status") { [self] in
            while true {
                statusWanted.wait()
                guard
                    let beacons = statusDue.withLock({ due in
                        defer { due = nil }; return due
                    })
                else { continue }
                notifier.status(statusLine(beacons: beacons))
            }
        }
    }

    /// "scanning hci0, 412 beacons, outbox 0", or what is wrong instead.
    func statusLine(beacons: Int) -> String {
        let scanning = adapters.all.filter(\.hearing).map(\.adapter)
        let outbox = (try? store?.outboxDepths())?.reduce(0) { $0 + $1.pending } ?? 0
        let input =
            simulated ?? (scanning.isEmpty ? "no adapter scanning" : "scanning \(scanning.joined(separator: ", "))")
        return "\(input), \(beacons) beacons, outbox \(outbox)"
    }

    /// `BEACOND_FAULT_WEDGE_ENGINE_AFTER=SECONDS` (tests only): the engine's thread hangs after
    /// that long, so that the watchdog's pings stop and systemd would restart the daemon. Only
    /// in debug builds, which the tests run: a release build on a gateway has no such switch.
    static func faultWedgeEngineAfter() -> TimeSpan? {
        #if DEBUG
            guard let text = getenv("BEACOND_FAULT_WEDGE_ENGINE_AFTER"), let seconds = Double(String(cString: text))
            else { return nil }
            return .milliseconds(Int64(seconds * 1000))
        #else
            return nil
        #endif
    }
}
