import ArgumentParser
import BeaconConfig
import BeaconCore
import Simulation

#if canImport(Glibc)
    import Glibc
#endif

/// `beacond simulate --site SITE.yaml --duration 10m --seed N --out TRACE.jsonl --truth TRUTH.jsonl`
struct Simulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Simulate a site's tags and receivers; write sighting records and the ground truth.",
        discussion: """
            SITE is a beacond configuration with receivers, assets and zones, and a simulation: section \
            (docs/positioning.md, "The simulator"); without one, the defaults apply. The trace replays with \
            `beacond replay --config SITE TRACE`.
            """)

    @Option(name: .long, help: "The site: a beacond configuration file.")
    var site: String

    @Option(name: .long, help: "How long to simulate, e.g. 10m.")
    var duration = "10m"

    @Option(name: .long, help: "Random seed; the same seed gives the same trace.")
    var seed: UInt64 = 1

    @Option(name: .long, help: "Sighting records (JSON Lines); - for standard output.")
    var out = "-"

    @Option(name: .long, help: "Ground truth (JSON Lines): positions and zone transitions.")
    var truth: String?

    @Option(name: .long, help: "Override simulation.sigma_db.")
    var sigma: Double?

    @Option(name: .long, help: "Override simulation.packet_loss (0...0.99).")
    var loss: Double?

    @Option(name: .long, help: "Start time (Unix seconds) of the trace.")
    var start: Double = 1_767_225_600  // 2026-01-01T00:00:00Z

    func run() throws {
        let config = try ConfigFile.load(site)
        guard let span = TimeSpan(parsing: duration), span > .seconds(0) else {
            throw ValidationError("--duration: expected a duration like \"10m\", got \"\(duration)\"")
        }
        var settings = config.simulation ?? SimulationSettings()
        if let sigma { settings.sigmaDB = sigma }
        if let loss { settings.packetLoss = min(max(loss, 0), 0.99) }
        guard !config.receivers.isEmpty, !config.assets.isEmpty else {
            standardError("\(site): a simulation needs receivers and assets")
            throw ExitCode(ExitStatus.config)
        }
        var sim = SiteSimulator(
            config: config, settings: settings, seed: seed, start: Timestamp(nanoseconds: Int64(start * 1e9)))
        var trace = OutputBuffer(fd: try open(out))
        var truthOut = try truth.map { OutputBuffer(fd: try open($0)) }
        let end = sim.now + span
        var sightings = 0
        while sim.now < end {
            let step = sim.advance()
            for s in step.sightings { trace.write(SightingRecord.text(s)) }
            sightings += step.sightings.count
            for p in step.truth { truthOut?.write(p.json.serialized) }
            for z in step.transitions { truthOut?.write(z.json.serialized) }
        }
        trace.flush()
        truthOut?.flush()
        standardError(
            "simulate: \(config.assets.count) tags, \(config.receivers.count) receivers, \(span), seed \(seed): "
                + "\(sightings) sightings")
    }

    private func open(_ path: String) throws -> Int32 {
        if path == "-" { return 1 }
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            standardError("\(path): \(String(cString: strerror(errno)))")
            throw ExitCode(ExitStatus.noInput)
        }
        return fd
    }
}
