import BeaconConfig
import BeaconCore
import BeaconRuntime
import BlueZ
import Logging
import POSIX
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// BlueZ over D-Bus (`BlueZScanner`) on a thread of its own: what the adapters hear goes to
/// the engine, and their states to `AdapterStates` and the event stream. Ready once BlueZ has
/// been tried (found or not): the daemon starts and runs without it.
final class RadioInput: DaemonService, @unchecked Sendable {
    let name = "bluez"
    let scanner: BlueZScanner
    private let threads = ServiceThreads()
    private let ended: @Sendable () -> Void

    /// `ended`: the scanner's loop returned without `stop()`.
    init(scanner: BlueZScanner, ended: @escaping @Sendable () -> Void) {
        self.scanner = scanner
        self.ended = ended
    }

    /// Sightings in batches to the engine; an adapter's change to the stream, and going blind
    /// (or hearing again) to the engine and the log.
    static func output(engine: LiveEngine, adapters: AdapterStates, logger: Logger)
        -> @Sendable (ScannerOutput) -> Void
    {
        { output in
            switch output {
            case let .sightings(batch): engine.submit(.sightings(batch))
            case let .adapter(status, t):
                let blind = adapters.update(status)
                engine.submit(.external(Event(time: t, payload: status.event)))
                guard let blind else { return }
                engine.submit(
                    .call { engine, _ in
                        engine.setBlind(blind)
                        return []
                    })
                if blind {
                    logger.warning(
                        "radios.blind",
                        metadata: ["next": "no region exits and no asset lost until an adapter hears again"])
                } else {
                    logger.info(
                        "radios.hearing",
                        metadata: ["next": "beacons and assets get exit_timeout to be heard before they exit"])
                }
            }
        }
    }

    /// Returns once BlueZ has been tried once, found or not (at most 3 s).
    func start() throws {
        threads.spawn(named: "beacond-bluez") { [scanner, ended] in
            scanner.run()
            ended()
        }
        let deadline = WallClock.now() + .seconds(3)
        while !scanner.attempted.load(ordering: .relaxed), WallClock.now() < deadline { usleep(5_000) }
    }

    /// Hands over the last batch before returning.
    func stop() {
        scanner.stop()
        threads.join()
    }

    func apply(_ reload: ConfigReload, from old: Config) -> Logger.Metadata {
        if reload.running.bluetooth != old.bluetooth {
            scanner.reconfigure(LiveDaemon.scannerSettings(reload.running.bluetooth))
        }
        return [:]
    }
}
