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
final class RadioInput: DaemonService, Sendable {
    let name = "bluez"
    /// Its last batch, at the stop, goes to an engine still running.
    let startsAfter = ["engine"]
    let scanner: BlueZScanner
    private let threads = ServiceThreads()
    private let ended: @Sendable () -> Void

    private let logger: Logger
    /// How long the stop waits for the scanner's thread.
    static let stopWait = TimeSpan.seconds(5)

    /// `ended`: the scanner's loop returned without `stop()`.
    init(scanner: BlueZScanner, logger: Logger, ended: @escaping @Sendable () -> Void) {
        self.scanner = scanner
        self.logger = logger
        self.ended = ended
    }

    /// Sightings in batches to `sightings`, as the scanner made them under their receiver ids
    /// (to the engine, and to the site when there is one); an adapter's change to the stream,
    /// and going blind (or hearing again) to the engine and the log.
    static func output(
        engine: LiveEngine, sightings: @escaping @Sendable ([Sighting]) -> Void, adapters: AdapterStates,
        logger: Logger
    ) -> @Sendable (ScannerOutput) -> Void {
        { output in
            switch output {
            case let .sightings(batch): sightings(batch)
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

    /// Hands over the last batch before returning. A scanner stuck inside libdbus (a system
    /// bus that took the connection and never answers, whose connect has no deadline of ours)
    /// is left behind after `stopWait`: it holds no batch then, and the daemon's stop
    /// must not wait on it until systemd's kill.
    func stop() {
        scanner.stop()
        guard !threads.join(within: Self.stopWait) else { return }
        logger.warning(
            "bluez.stop_abandoned",
            metadata: [
                "waited_s": "\(Int(Self.stopWait.seconds))",
                "next":
                    "the scanner's thread is stuck in D-Bus (a system bus that does not answer); stopping without it",
            ])
    }

    func apply(_ reload: ConfigReload, from old: Config) -> Logger.Metadata {
        let new = LiveDaemon.scannerSettings(reload.running)
        if new != LiveDaemon.scannerSettings(old) { scanner.reconfigure(new) }
        return [:]
    }
}
