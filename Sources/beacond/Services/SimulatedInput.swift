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
    private let stopRequested = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let threads = ServiceThreads()
    private let logger: Logger
    private let seed: UInt64
    private let config: Config
    let sightings = Atomic<Int>(0)
    /// Where what the simulated receivers hear goes (the engine, and the site).
    private let deliver: @Sendable ([Sighting]) -> Void
    /// In a site, only this gateway's receivers are played; nil: all of them.
    private let receivers: Set<String>?

    init(
        config: Config, seed: UInt64, logger: Logger,
        deliver: @escaping @Sendable ([Sighting]) -> Void
    ) {
        self.deliver = deliver
        receivers = config.site == nil ? nil : LocalReceivers.simulated(config)
        simulator = SiteSimulator(
            config: config, settings: config.simulation ?? SimulationSettings(), seed: seed, start: WallClock.now())
        self.logger = logger
        self.seed = seed
        self.config = config
    }

    func start() throws {
        threads.spawn(named: "beacond-sim") { [self] in run() }
        logger.info(
            "simulation.started",
            metadata: [
                "receivers": "\(receivers?.count ?? config.receivers.count)", "tags": "\(config.assets.count)",
                "seed": "\(seed)",
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
            let heard = receivers.map { own in step.sightings.filter { own.contains($0.receiver) } } ?? step.sightings
            if !heard.isEmpty {
                deliver(heard)
                sightings.add(heard.count, ordering: .relaxed)
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
