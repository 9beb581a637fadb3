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
final class SimulatedInput: DaemonService, Sendable {
    let name = "simulator"
    /// Its last batch, at the stop, goes to an engine still running.
    let startsAfter = ["engine"]
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
    /// ESPresense nodes and OpenMQTTGateways (SPEC §9), played by the site's first gateway
    /// (by id) alone, as their messages on the broker (`publishForeign`); empty elsewhere.
    private let foreign: Set<String>
    private let publishForeign: @Sendable ([Sighting]) -> Void

    init(
        config: Config, seed: UInt64, logger: Logger,
        deliver: @escaping @Sendable ([Sighting]) -> Void,
        publishForeign: @escaping @Sendable ([Sighting]) -> Void = { _ in }
    ) {
        self.deliver = deliver
        self.publishForeign = publishForeign
        receivers = config.site == nil ? nil : LocalReceivers.simulated(config)
        foreign = Self.playsForeignReceivers(config) ? config.site?.foreign.receiverIDs ?? [] : []
        self.logger = logger
        self.seed = seed
        self.config = config
    }

    func start() throws {
        // Made now, after the engine has started: sightings stamped before its first turn
        // would be counted late.
        let simulator = SiteSimulator(
            config: config, settings: config.simulation ?? SimulationSettings(), seed: seed, start: WallClock.now())
        threads.spawn(named: "beacond-sim") { [self] in run(simulator) }
        logger.info(
            "simulation.started",
            metadata: [
                "receivers": "\(receivers?.count ?? config.receivers.count)", "tags": "\(config.assets.count)",
                "seed": "\(seed)",
                "next": "no BlueZ; sightings come from the site simulator",
            ])
    }

    /// Steps the simulation in real time until `stop()`. Each step's sightings are handed on
    /// at their own times, as radios hear them, not together at the end of the step: the
    /// engine's clock follows the wall clock, so a sighting handed on after its time is
    /// counted `late` (a fifth of them were, when each step's went at once).
    private func run(_ simulator: SiteSimulator) {
        var simulator = simulator
        while !stopRequested.load(ordering: .relaxed) {
            let step = simulator.advance()
            let mine = receivers.map { own in
                step.sightings.filter { own.contains($0.receiver) || foreign.contains($0.receiver) }
            }
            let heard = mine ?? step.sightings
            var first = 0
            while first < heard.count, !stopRequested.load(ordering: .relaxed) {
                let time = heard[first].time
                var end = first + 1
                while end < heard.count, heard[end].time == time { end += 1 }
                guard waitUntil(time) else { return }
                let batch = heard[first..<end]
                if foreign.isEmpty {
                    deliver(Array(batch))
                } else {
                    deliver(batch.filter { !foreign.contains($0.receiver) })
                    publishForeign(batch.filter { foreign.contains($0.receiver) })
                }
                sightings.add(end - first, ordering: .relaxed)
                first = end
            }
            guard waitUntil(simulator.now) else { return }
        }
    }

    /// Whether this gateway is the site's first by id (of those the site file names, and
    /// itself): one gateway plays the other systems' receivers, or each message would come
    /// once per gateway.
    static func playsForeignReceivers(_ config: Config) -> Bool {
        guard let site = config.site, !site.foreign.isEmpty else { return false }
        let named = Set(config.receivers.compactMap(\.gateway)).union(site.gateways).union([config.gateway.id])
        return named.min() == config.gateway.id
    }

    /// Waits for the wall clock to reach `time`; false when stopped meanwhile.
    private func waitUntil(_ time: Timestamp) -> Bool {
        let wait = (time - WallClock.now()).nanoseconds
        if wait > 0 { _ = wake.wait(timeout: .now() + .nanoseconds(Int(wait))) }
        return !stopRequested.load(ordering: .relaxed)
    }

    func stop() {
        stopRequested.store(true, ordering: .relaxed)
        wake.signal()
        threads.join()
        logger.info("simulation.stopped", metadata: ["sightings": "\(sightings.load(ordering: .relaxed))"])
    }
}
