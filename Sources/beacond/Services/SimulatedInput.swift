import BeaconConfig
import BeaconCore
import BeaconRuntime
import Dispatch
import Logging
import Simulation
import Synchronization

/// `beacond --simulate`: the site simulator instead of BlueZ, paced on the wall clock, so
/// the whole daemon (API, stream, webhooks, positions, alarms) runs on a simulated store
/// with no Bluetooth hardware. In the daemon's services it takes the radio input's place.
final class SimulatedInput: DaemonService, @unchecked Sendable {
    let name = "simulator"
    private var simulator: SiteSimulator
    private let engine: LiveEngine
    private let stopRequested = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let threads = ServiceThreads()
    private let logger: Logger
    private let seed: UInt64
    private let config: Config
    let sightings = Atomic<Int>(0)

    init(config: Config, seed: UInt64, engine: LiveEngine, logger: Logger) {
        simulator = SiteSimulator(
            config: config, settings: config.simulation ?? SimulationSettings(), seed: seed, start: WallClock.now())
        self.engine = engine
        self.logger = logger
        self.seed = seed
        self.config = config
    }

    func start() throws {
        threads.spawn(named: "beacond-sim") { [self] in run() }
        logger.info(
            "simulation.started",
            metadata: [
                "receivers": "\(config.receivers.count)", "tags": "\(config.assets.count)", "seed": "\(seed)",
                "next": "no BlueZ; sightings come from the site simulator",
            ])
    }

    /// Steps the simulation in real time until `stop()`.
    private func run() {
        while !stopRequested.load(ordering: .relaxed) {
            let step = simulator.advance()
            let wait = (simulator.now - WallClock.now()).nanoseconds
            if wait > 0 { _ = wake.wait(timeout: .now() + .nanoseconds(Int(wait))) }
            guard !stopRequested.load(ordering: .relaxed) else { break }
            if !step.sightings.isEmpty {
                engine.submit(.sightings(step.sightings))
                sightings.add(step.sightings.count, ordering: .relaxed)
            }
        }
    }

    func stop() {
        stopRequested.store(true, ordering: .relaxed)
        wake.signal()
        threads.join()
        logger.info("simulation.stopped", metadata: ["sightings": "\(sightings.load(ordering: .relaxed))"])
    }
}
