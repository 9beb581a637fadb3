import APIModel
import ArgumentParser
import BeaconCore
import BeaconRuntime
import POSIX

#if canImport(Glibc)
    import Glibc
#endif

/// `beaconctl`: the operator's client for the daemon's Unix-socket API (SPEC §4.3).
/// Human tables by default, `--json` for scripts; exit 0 on success, 1 when the daemon
/// refused the request, 69 when no daemon listens, 77 when access is denied.
struct Beaconctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beaconctl",
        abstract: "Operate beacond through its Unix-socket API.",
        discussion: """
            Exit status: 0 success, 1 the daemon refused the request (its message is printed), 64 no command, \
            69 no daemon on the socket, 77 permission denied.
            """,
        version: "0.1.0",
        subcommands: [
            Status.self, Beacons.self, Regions.self, Assets.self, Tags.self, Zones.self, Report.self, Map.self,
            Alarms.self,
            Alarm.self,
            Events.self, Outbox.self, Doctor.self, Calibrate.self, Monitor.self, Unmonitor.self, TestWebhook.self,
            Enroll.self,
        ]
    )
}

/// Lets the shared options come before the command too (`beaconctl --socket S status`), as
/// operators type them.
@main
enum Main {
    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var moved: [String] = []
        var i = 0
        while i < arguments.count, arguments[i].hasPrefix("-") {
            let a = arguments[i]
            if a == "--socket", i + 1 < arguments.count {
                moved += [a, arguments[i + 1]]
                arguments.removeSubrange(i...(i + 1))
            } else if a.hasPrefix("--socket=") || a == "--json" {
                moved.append(a)
                arguments.remove(at: i)
            } else {
                i += 1
            }
        }
        // No command: the usage on standard error and 64 (EX_USAGE), not a help page that
        // exits 0 in a script that forgot its command.
        if i >= arguments.count,
            !arguments.contains(where: { ["--help", "-h", "--version", "--experimental-dump-help"].contains($0) })
        {
            printError(Beaconctl.helpMessage())
            exit(64)
        }
        if !moved.isEmpty, i < arguments.count { arguments.insert(contentsOf: moved, at: i + 1) }
        Beaconctl.main(arguments)
    }
}

/// `--socket` and `--json`, shared by every command.
struct Common: ParsableArguments {
    @Option(name: .long, help: "The daemon's API socket (default: $BEACOND_SOCKET, else /run/beacond/api.sock).")
    var socket = Common.defaultSocket

    /// `BEACOND_SOCKET` when set and not empty: one export serves every command on a gateway
    /// whose daemon uses another `api.socket` (a test rig, two daemons on one machine).
    static var defaultSocket: String {
        if let value = getenv("BEACOND_SOCKET").map({ String(cString: $0) }), !value.isEmpty { return value }
        return "/run/beacond/api.sock"
    }

    @Flag(name: .long, help: "Print the daemon's JSON instead of a table.")
    var json = false

    var client: APIClient { APIClient(socketPath: socket) }

    /// Runs `body`, turning API failures into their message and exit status.
    func run(_ body: (APIClient) throws(APIClient.Failure) -> Void) throws {
        do {
            try body(client)
        } catch {
            printError("beaconctl: \(error.message)")
            throw ExitCode(error.status)
        }
    }

    /// GETs `path` and prints it as JSON or through `table`.
    func show(_ path: String, _ table: (JSONValue) -> String) throws {
        try run { client throws(APIClient.Failure) in
            let value = try client.get(path)
            writeOut(json ? value.serialized : table(value))
        }
    }
}

func printError(_ text: String) {
    let line = Array((OutsideText.block(text) + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

/// One line on standard output, unbuffered.
func writeLine(_ text: String) { writeAll(fd: 1, OutsideText.block(text) + "\n") }

/// Standard output, as every command writes it: whatever a value from outside holds (a
/// proxy's name, a device's mDNS record, a receiver's error), no control character reaches
/// the terminal but the lines the command itself writes (`OutsideText.block`); values that
/// could forge a line are written with `OutsideText.line` where they are put in.
func writeOut(_ text: String, terminator: String = "\n") {
    print(OutsideText.block(text), terminator: terminator)
}

struct Beacons: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Beacons heard recently.")
    @OptionGroup var common: Common

    func run() throws {
        try common.show("/v1/beacons") { value in
            var t = Table("BEACON", "PROXIMITY", "DISTANCE_M", "RECEIVERS", "LAST_SEEN")
            let page = BeaconsPage(json: value)
            for b in page.beacons {
                let receivers = b.receivers.map { "\($0.receiver)@\(cell($0.rssi))" }
                t.add(
                    b.tag?.text ?? "-", b.proximity, cell(b.distance), receivers.joined(separator: " "),
                    b.lastSeen ?? "-")
            }
            let shown = page.beacons.count
            if page.total > shown {
                return t.text
                    + "(the \(shown) most recently heard of \(page.total); GET /v1/beacons?offset=\(shown) for more)\n"
            }
            return t.text
        }
    }
}

struct Assets: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Assets: positions, zones, last seen.")
    @OptionGroup var common: Common

    func run() throws {
        try common.show("/v1/assets") { value in
            var t = Table("ASSET", "NAME", "POSITION", "ZONES", "LAST_SEEN")
            for a in AssetList(json: value).assets {
                let position = a.position.map { "\(cell($0.x)),\(cell($0.y)) L\($0.level)" }
                t.add(a.id, a.name ?? "-", position ?? "-", list(a.zones), a.lastSeen ?? "-")
            }
            return t.text
        }
    }
}

struct Zones: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Zones.")
    @OptionGroup var common: Common

    func run() throws {
        try common.show("/v1/zones") { value in
            var t = Table("ZONE", "SHAPE")
            for z in FloorReport.zones(json: value) { t.add(z.id, z.shapeText) }
            return t.text
        }
    }
}

/// `beaconctl map`: the floor view as an SVG or as text (`FloorMap`).
struct Map: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The floor with its zones, receivers and assets: an SVG, or a text map for the terminal.")

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, svg }

    @OptionGroup var common: Common
    @Option(help: "text (the default) or svg.") var format: Format = .text
    @Option(help: "The level to draw (default: the lowest).") var level: Int?
    @Option(help: "Width of the text map in characters.") var columns = 72

    func run() throws {
        try common.run { api throws(APIClient.Failure) in
            let map = FloorMap(floor: try api.get("/v1/floor"), assets: try api.get("/v1/assets"), level: level)
            writeOut(format == .svg ? map.svg() : map.text(columns: max(20, min(columns, 400))), terminator: "")
        }
    }
}

struct Alarms: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Alarms and whether they are active.")
    @OptionGroup var common: Common

    func run() throws {
        try common.show("/v1/alarms") { value in
            var t = Table("ALARM", "ACTIVE", "ZONES", "ON", "ASSETS")
            for a in AlarmList(json: value).alarms {
                t.add(a.id, yes(a.active), list(a.zones), list(a.on), a.assets.map(list) ?? "all")
            }
            return t.text
        }
    }
}

/// `beaconctl alarm enable|disable ID`: arms or disarms an alarm (`PATCH /v1/alarms/{id}`),
/// kept across restarts, as a night shift does for a door alarm without editing the file.
struct Alarm: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Enable or disable an alarm (kept across restarts; needs beacond-admin).")

    enum Action: String, ExpressibleByArgument, CaseIterable { case enable, disable }

    @OptionGroup var common: Common
    @Argument(help: "enable or disable.") var action: Action
    @Argument(help: "The alarm's id (beaconctl alarms lists them).") var id: String

    func run() throws {
        try common.run { api throws(APIClient.Failure) in
            let active = action == .enable
            let answer = try api.request(
                "PATCH", "/v1/alarms/\(percentEncode(id))", body: "{\"active\":\(active)}")
            if common.json {
                writeOut(answer.body, terminator: "")
            } else {
                writeOut("alarm \(id) \(active ? "enabled" : "disabled")")
            }
        }
    }
}

struct Outbox: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Webhook backlog and dead letters.")
    @OptionGroup var common: Common

    func run() throws {
        try common.show("/v1/outbox") { value in
            let report = OutboxReport(json: value)
            var hooks = Table("WEBHOOK", "STATE", "PENDING", "OLDEST", "DEAD", "DELIVERED", "LAST_ERROR")
            for w in report.webhooks {
                hooks.add(
                    w.id, w.state.rawValue, "\(w.pending)", w.oldest ?? "-", Self.dead(w), "\(w.delivered)",
                    w.lastError ?? "-")
            }
            var dead = Table("DEAD LETTER", "WEBHOOK", "TYPE", "ENQUEUED", "REASON")
            for d in report.deadLetters { dead.add(d.id, d.webhook, d.type, d.enqueued ?? "-", d.reason) }
            return hooks.text + "\n\n" + dead.text
        }
    }

    /// Dead letters kept, and how many older ones were discarded past the cap.
    static func dead(_ webhook: StatusReport.Webhook) -> String {
        guard webhook.deadLettersDiscarded > 0 else { return "\(webhook.deadLetters)" }
        return "\(webhook.deadLetters) (+\(webhook.deadLettersDiscarded) discarded)"
    }
}

/// Path segments and query values: everything but unreserved characters is escaped.
func percentEncode(_ text: String) -> String {
    var out = ""
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "*"):
            out.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            let hex = Array("0123456789ABCDEF".unicodeScalars)
            out += "%"
            out.unicodeScalars.append(hex[Int(byte >> 4)])
            out.unicodeScalars.append(hex[Int(byte & 0xF)])
        }
    }
    return out
}

/// A table cell for a flag.
func yes(_ flag: Bool) -> String { flag ? "yes" : "no" }

extension String {
    var trimmingNewline: String { hasSuffix("\n") ? String(dropLast()) : self }
}

/// A table cell for a figure: "-" when absent, no needless ".0".
func cell(_ value: Double?) -> String { value.map { JSONValue.number($0).cell } ?? "-" }

/// A table cell for a list: comma-separated, "-" when empty.
func list(_ items: [String]) -> String { items.isEmpty ? "-" : items.joined(separator: ",") }

struct TestWebhook: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a webhook one signed test event now and say what its receiver answered.",
        discussion: "The event's type is beacond.webhook.test; it is not stored or sent again. Exit 0 on a 2xx.")
    @OptionGroup var common: Common
    @Argument(help: "The webhook's id in the configuration.") var webhook: String

    func run() throws {
        try common.run { api throws(APIClient.Failure) in
            let response = try api.request("POST", "/v1/webhooks/\(percentEncode(webhook))/test")
            guard !common.json else { return writeOut(response.body) }
            let answer = WebhookTestReport(json: response.json ?? .null)
            writeOut(
                "\(webhook): HTTP \(answer.status) from \(answer.url) in \(answer.tookMilliseconds) ms"
                    + (answer.signed ? ", signed" : ", unsigned (no secret_file)"))
        }
    }
}
