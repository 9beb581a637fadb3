import ArgumentParser
import BeaconConfig
import BeaconCore
import BeaconRuntime
import POSIX
import Systemd

#if canImport(Glibc)
    import Glibc
#endif

/// `beacond`: the daemon, its config check, and `replay`.
@main
struct Beacond: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacond",
        abstract: "BLE beacon region monitoring, ranging and asset tracking for Linux gateways.",
        version: BeaconVersion.string,
        subcommands: [Daemon.self, Replay.self, Simulate.self],
        defaultSubcommand: Daemon.self
    )
}

/// `beacond [--config PATH] [--check-config]`: the daemon itself (the default subcommand).
struct Daemon: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the daemon (the default), or validate its configuration with --check-config."
    )

    @Option(name: .long, help: "Configuration file.")
    var config = ConfigFile.defaultPath

    @Flag(name: .long, help: "Validate the configuration and exit: 0 when valid, 78 when not.")
    var checkConfig = false

    @Flag(
        name: .long, inversion: .prefixedNo,
        help: "Also print events on standard output as JSON Lines (the API and webhooks get them either way).")
    var printEvents = true

    @Flag(
        name: .long,
        help: "Run on the site simulator (the config's receivers, assets and simulation:) instead of BlueZ.")
    var simulate = false

    @Option(name: .long, help: "Random seed for --simulate.")
    var seed: UInt64 = 1

    @Option(
        name: .long,
        help: "Lowest level logged: error, warning, notice, info or debug (default: gateway.log_level, info).")
    var logLevel: String?

    func run() throws {
        let (loaded, digest, warnings) = try ConfigFile.loadWithDigest(config)
        if checkConfig {
            for warning in warnings { standardError(warning.description) }
            let regions = loaded.clients.reduce(0) { $0 + $1.regions.count }
            print(
                "\(config): OK (gateway \(loaded.gateway.id), \(loaded.clients.count) clients, \(regions) regions, "
                    + "\(loaded.receivers.count) receivers, \(loaded.assets.count) assets, \(loaded.webhooks.count) webhooks)"
            )
            return
        }
        if simulate && (loaded.receivers.isEmpty || loaded.assets.isEmpty) {
            standardError("\(config): --simulate needs receivers and assets in the configuration")
            throw ExitCode(ExitStatus.config)
        }
        guard let level = JournalLog.Level(name: logLevel ?? loaded.gateway.logLevel.rawValue) else {
            throw ValidationError(
                "--log-level: expected error, warning, notice, info or debug, got \"\(logLevel ?? "")\"")
        }
        try LiveDaemon(
            config: loaded, digest: digest, path: config, printEvents: printEvents,
            simulationSeed: simulate ? seed : nil,
            logLevel: level, logLevelFromCommandLine: logLevel != nil, configWarnings: warnings
        ).run()
    }
}

/// `beacond replay --config C TRACE.jsonl`.
struct Replay: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the engine on a recorded trace, on the trace's clock, and print events as JSON Lines.",
        discussion: """
            Each line of TRACE is a sighting record (SPEC §1.2). Events go to standard output, one CloudEvent \
            per line; malformed lines are reported on standard error with their line number and skipped. \
            Use - to read the trace from standard input.
            """
    )

    @Option(name: .long, help: "Configuration file.")
    var config = ConfigFile.defaultPath

    @Argument(help: "Trace of sighting records (JSON Lines), or - for standard input.")
    var trace: String

    @Flag(name: .long, help: "Print a summary of lines, sightings, skipped lines and events on standard error.")
    var summary = false

    @Option(name: .long, help: "Threads for the engine's per-asset work (default: engine.threads, or every core).")
    var threads: Int?

    @Option(
        name: .long,
        help:
            "Event ids from this number (0 to 4294967295) rather than a random one: two replays then print the same bytes."
    )
    var idNonce: UInt32?

    func validate() throws {
        if let threads, !(1...64).contains(threads) {
            throw ValidationError("--threads: expected 1 to 64, got \(threads)")
        }
    }

    func run() throws {
        let loaded = try ConfigFile.load(config)
        let lines: BlockLineReader
        do {
            lines = try BlockLineReader(path: trace)
        } catch {
            standardError("beacond replay: \(error)")
            throw ExitCode(ExitStatus.noInput)
        }
        var replay = TraceReplay(config: loaded, idNonce: idNonce ?? UInt32.random(in: .min ... .max))
        let lent = EngineThreads(threads: threads ?? loaded.engine.threads(available: availableCores()))
        defer { lent.stop() }
        replay.shardRunner = lent
        var output = OutputBuffer()
        let emit: (String) -> Void = { output.write($0) }
        let report: (String) -> Void = { message in
            output.flush()
            standardError("\(trace): \(message)")
        }
        lines.forEachLine { line, number in replay.feed(bytes: line, number: number, emit: emit, report: report) }
        replay.finish(emit: emit, report: report)
        output.flush()
        if summary {
            let s = replay.summary
            standardError(
                "replayed \(s.sightings) sightings from \(s.lines) lines, \(s.skipped) skipped, \(s.events) events")
        }
    }
}
