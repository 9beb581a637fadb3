import APIModel
import ArgumentParser
import BeaconCore

#if canImport(Glibc)
    import Glibc
#endif

/// `beaconctl events`: the stored history, or `--follow` for the live stream, resuming after
/// the last event seen when the connection drops (a daemon restart loses nothing).
struct Events: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Event history, or the live stream with --follow.")
    @OptionGroup var common: Common
    @Flag(name: .shortAndLong, help: "Follow the live stream; reconnects and resumes after the last event seen.")
    var follow = false
    @Option(help: "Only these types, e.g. \"region.*\" (comma-separated globs).") var type: String?
    @Option(help: "Only events after this id.") var after: String?
    @Option(help: "At most this many events from the history (1...1000).") var limit = 50
    @Option(help: "Only events since this time: a span back from now (1h, 30m, 7d) or an RFC 3339 time.")
    var since: String?
    @Option(help: "The newest N events (1...1000), newest first.") var last: Int?

    func validate() throws {
        if last != nil && (follow || after != nil) {
            throw ValidationError("--last shows the newest events; it does not go with --follow or --after")
        }
        if since != nil && follow {
            throw ValidationError("--since reads the history; with --follow, resume with --after ID")
        }
        if let last, !(1...1000).contains(last) { throw ValidationError("--last: expected 1...1000, got \(last)") }
    }

    func run() throws {
        var query: [String] = []
        if let type { query.append("type=\(percentEncode(type))") }
        guard follow else {
            if let after { query.append("after=\(percentEncode(after))") }
            if let since { query.append("since=\(percentEncode(since))") }
            if last != nil { query.append("order=newest") }
            query.append("limit=\(last ?? limit)")
            try common.run { api throws(APIClient.Failure) in
                let answer = try api.get("/v1/events?" + query.joined(separator: "&"))
                for event in EventPage(json: answer).events { writeOut(line(event.json)) }
            }
            return
        }
        let q = query.isEmpty ? "" : "?" + query.joined(separator: "&")
        var last = after
        var connectedOnce = false
        while true {
            do {
                try common.client.stream(query: q, lastEventID: last) { id, data in
                    last = id
                    // Straight to the descriptor: each event is seen at once, also through a pipe.
                    writeLine(common.json ? data : (try? JSONParser.parse(data)).map(line) ?? data)
                }
                connectedOnce = true
                printError("beaconctl: the stream closed; reconnecting after \(last ?? "the start")")
            } catch {
                // Unreachable before the first connection is an error; later it is a restart.
                if !connectedOnce || error.status == APIClient.Exit.permission || error.status == APIClient.Exit.refused
                {
                    printError("beaconctl: \(error.message)")
                    throw ExitCode(error.status)
                }
            }
            sleep(1)
        }
    }

    private func line(_ event: JSONValue) -> String {
        if common.json { return event.serialized }
        let e = EventPage.Event(json: event)
        // One line, whatever a relay or a device put in the subject (`OutsideText`).
        return OutsideText.line(
            "\(e.time)  \(e.type.replacingPrefix("beacond."))  \(e.subject)  \(e.data.serialized)", limit: .max)
    }
}

extension String {
    func replacingPrefix(_ prefix: String) -> String { hasPrefix(prefix) ? String(dropFirst(prefix.count)) : self }
}
