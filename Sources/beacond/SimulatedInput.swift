import BeaconConfig
import BeaconCore
import BeaconRuntime
import Dispatch
import Simulation
import Synchronization

/// `beacond --simulate`: the site simulator instead of BlueZ, paced on the wall clock, so
/// the whole daemon (API, stream, webhooks, positions, alarms) runs on a simulated store
/// with no Bluetooth hardware.
final class SimulatedInput: @unchecked Sendable {
    private var simulator: SiteSimulator
    private let engine: LiveEngine
    private let stopRequested = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    let sightings = Atomic<Int>(0)

    init(config: Config, seed: UInt64, engine: LiveEngine) {
        simulator = SiteSimulator(
            config: config, settings: config.simulation ?? SimulationSettings(), seed: seed, start: WallClock.now())
        self.engine = engine
    }

    /// Steps the simulation in real time until `stop()`.
    func run() {
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
    }
}
