import ArgumentParser

/// `beaconctl`: the operator's client for the daemon's Unix-socket API (SPEC §4.3).
///
/// The API it talks to arrives with the publishing work; until then it prints its usage,
/// and a command says plainly that there is no API to talk to yet.
@main
struct Beaconctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beaconctl",
        abstract: "Operate beacond through its Unix-socket API.",
        discussion: """
            Commands:
              status                         gateway, adapters, rates, outbox backlog, last errors
              beacons                        beacons heard recently
              regions [CLIENT]               clients' regions and their state
              assets | zones | alarms        asset positions, zones, alarms
              events [--follow] [--type GLOB]
              outbox                         webhook backlog and dead letters
              doctor                         checks an operator makes first, each with its fix
              monitor CLIENT REGION --uuid … start monitoring a region
              unmonitor CLIENT REGION        stop monitoring it

            Human tables by default, --json for scripts, --socket PATH (default /run/beacond/api.sock).
            """,
        version: "0.1.0"
    )

    @Argument(help: "A command (see above).")
    var command: String?

    @Argument(parsing: .captureForPassthrough, help: .hidden)
    var rest: [String] = []

    func run() throws {
        guard let command else {
            print(Beaconctl.helpMessage())
            return
        }
        throw ValidationError(
            "'\(command)' needs the daemon's API, which this version of beacond does not serve yet; "
                + "use `beacond replay` to run the engine on a trace")
    }
}
