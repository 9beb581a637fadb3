import BeaconConfig
import BeaconCore
import BeaconRuntime
import BlueZ
import Dispatch
import Storage
import Synchronization
import Systemd

#if canImport(Glibc)
    import Glibc
#endif

/// What the daemon tells systemd: watchdog pings from the engine's own loop, and a status
/// line every few seconds ("scanning hci0, 412 beacons, outbox 0").
extension LiveDaemon {
    static let statusInterval = TimeSpan.seconds(5)

    func watchdogAndStatus(engine: LiveEngine, store: StateStore?, adapters: AdapterStates)
        -> @Sendable (Timestamp) -> Void
    {
        let lastStatus = Mutex<Timestamp?>(nil)
        let wedgeAfter = LiveDaemon.faultWedgeEngineAfter()
        let started = WallClock.now()
        return { [notifier, engine] now in
            if let wedgeAfter, now - started >= wedgeAfter {
                // Fault injection for the watchdog test: the engine's thread stops here for good.
                while true { sleep(3600) }
            }
            notifier.engineAlive()
            let due = lastStatus.withLock { last -> Bool in
                guard last.map({ now - $0 >= LiveDaemon.statusInterval }) ?? true else { return false }
                last = now
                return true
            }
            if due, notifier.underSystemd {
                // The line reads the outbox from SQLite: not on the engine's thread. The beacon
                // count is read here, where the engine is ours.
                let beacons = engine.beaconCount
                DispatchQueue.global().async {
                    notifier.status(statusLine(beacons: beacons, store: store, adapters: adapters))
                }
            }
        }
    }

    /// "scanning hci0, 412 beacons, outbox 0", or what is wrong instead.
    func statusLine(beacons: Int, store: StateStore?, adapters: AdapterStates) -> String {
        let scanning = adapters.all.filter { $0.present && $0.powered && $0.discovering }.map(\.adapter)
        let outbox = (try? store?.outboxDepths())?.reduce(0) { $0 + $1.pending } ?? 0
        let input =
            simulationSeed != nil
            ? "simulating \(config.assets.count) tags"
            : (scanning.isEmpty ? "no adapter scanning" : "scanning \(scanning.joined(separator: ", "))")
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

/// The adapters' latest states, as the scanner reported them (for status and metrics).
final class AdapterStates: Sendable {
    private let states = Mutex<[String: AdapterStatus]>([:])
    /// Whether an adapter has ever heard (discovered), and whether none does now.
    private let sight = Mutex<(seen: Bool, blind: Bool)>((false, false))

    /// Records an adapter's change; returns true when, with it, the gateway went blind (no
    /// adapter present, powered and discovering, after one was), false when it hears again,
    /// nil when neither (`BeaconEngine.setBlind`).
    func update(_ status: AdapterStatus) -> Bool? {
        let hearing = states.withLock { states in
            states[status.adapter] = status
            return states.values.contains { $0.present && $0.powered && $0.discovering }
        }
        return sight.withLock { sight in
            if hearing {
                sight.seen = true
                guard sight.blind else { return nil }
                sight.blind = false
                return false
            }
            guard sight.seen, !sight.blind else { return nil }
            sight.blind = true
            return true
        }
    }

    /// Sorted by name.
    var all: [AdapterStatus] { states.withLock { $0.values.sorted { $0.adapter < $1.adapter } } }
}
