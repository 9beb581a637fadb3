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
            Status.self, Beacons.self, Regions.self, Assets.self, Zones.self, Map.self, Alarms.self, Alarm.self,
            Events.self, Outbox.self, Doctor.self, Calibrate.self, Monitor.self, Unmonitor.self, TestWebhook.self,
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
            print(json ? value.serialized : table(value))
        }
    }
}

func printError(_ text: String) {
    let line = Array((text + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

/// One line on standard output, unbuffered.
func writeLine(_ text: String) { writeAll(fd: 1, text + "\n") }

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Gateway, adapters, rates, outbox backlog and last errors.")
    @OptionGroup var common: Common

    func run() throws {
        try common.show("/v1/status") { json in
            let s = StatusReport(json: json)
            let c = s.counts
            var lines = [
                "gateway   \(s.gateway)  (beacond \(s.version), up \(JSONValue.round(s.uptimeSeconds, places: 10).cell) s)",
                "config    \(s.configFile ?? "-")",
                s.simulated
                    ? "input     a simulated site (--simulate); BlueZ not used"
                    : "bluez     \(s.bluezReachable ? "reachable" : "NOT reachable")",
                "sightings \(c.sightings) (\(JSONValue.round(s.sightingsPerSecond).cell)/s), beacons \(c.beacons), "
                    + "asset tags \(c.assetTags), events \(c.events)",
                "outbox    \(s.outbox.pending) pending, \(s.outbox.deadLetters) dead letters",
            ]
            // Only when there is something to say: relays out of time, receivers with no position
            if c.stale > 0 || c.clockAhead > 0 {
                lines.append(
                    "relays    \(c.stale) sightings too old to use, \(c.clockAhead) stamped ahead of this clock")
            }
            if let age = s.engineLastTurnAgeSeconds, age >= Doctor.stuckEngineAfter {
                lines.append(
                    "engine    has not run for \(Int(age)) s: counts are as of then (beaconctl doctor)")
            }
            if let failure = s.stateStoreError {
                lines.append(
                    "state     \(c.eventsHeld) events held in memory: the state store cannot be opened: \(failure) "
                        + "(beaconctl doctor)")
            } else if c.eventsHeld > 0 {
                lines.append(
                    "state     \(c.eventsHeld) events held in memory: the state store cannot write (beaconctl doctor)")
            }
            if c.stateEmptied > 0 {
                lines.append(
                    "state     found corrupt \(c.stateEmptied) time(s) and emptied in place: the storage may be failing "
                        + "(beaconctl doctor)")
            }
            if !s.unplacedReceivers.isEmpty {
                lines.append(
                    "receivers with no position (not used for assets): "
                        + s.unplacedReceivers.map { "\($0.0) (\($0.1))" }.joined(separator: ", "))
            }
            var adapters = Table("ADAPTER", "PRESENT", "POWERED", "DISCOVERING")
            for a in s.adapters {
                adapters.add(a.adapter, yes(a.present), yes(a.powered), yes(a.discovering))
            }
            lines.append("")
            lines.append(adapters.text)
            if let site = s.site { lines += siteLines(site) }
            if !s.lastErrors.isEmpty {
                lines.append("")
                lines.append("last errors:")
                lines += s.lastErrors.map { "  " + $0 }
            }
            return lines.joined(separator: "\n")
        }
    }
}

/// The site's part of `beaconctl status`: the broker, and each gateway as this one sees it.
func siteLines(_ site: StatusReport.Site) -> [String] {
    let broker =
        site.connected
        ? "connected, \(site.reconnects) reconnects"
        : "NOT connected: \(site.lastError ?? "connecting") (beaconctl doctor)"
    var lines = [
        "",
        "site      \(site.id) on \(site.broker): \(broker)",
        "batches   \(site.batchesSent) sent, \(site.batchesReceived) received (\(site.sightingsReceived) sightings), "
            + "\(site.batchesLost) lost, \(site.sightingsUnsent) own sightings unsent",
    ]
    if let l = site.locator {
        lines.append(
            "locator   \(l.gateway) (epoch \(l.epoch), since \(l.since))\(l.thisGateway ? ": this gateway" : "")")
    } else {
        lines.append("locator   none announced yet")
    }
    if !site.dropped.isEmpty {
        lines.append("dropped   " + site.dropped.map { "\($0.1) \($0.0)" }.joined(separator: ", "))
    }
    var gateways = Table("GATEWAY", "ONLINE", "LAST_BATCH", "BATCHES", "LOST", "CLOCK_OFFSET_S")
    for g in site.gateways {
        gateways.add(
            g.id, g.online.map(yes) ?? "-", g.lastBatch ?? "-", "\(g.batches)", "\(g.lost)",
            g.clockOffsetSeconds.map { JSONValue.round($0, places: 1000).cell } ?? "-")
    }
    lines.append("")
    lines.append(gateways.text)
    return lines
}

struct Beacons: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Beacons heard recently.")
    @OptionGroup var common: Common

    func run() throws {
        try common.show("/v1/beacons") { value in
            var t = Table("BEACON", "PROXIMITY", "DISTANCE_M", "RECEIVERS", "LAST_SEEN")
            for b in value["beacons"]?.items ?? [] {
                let id = b["beacon"].map { id -> String in
                    if let uuid = id["uuid"]?.cell {
                        return "\(uuid) \(id["major"]?.cell ?? "-")/\(id["minor"]?.cell ?? "-")"
                    }
                    return "\(id["namespace"]?.cell ?? "-")/\(id["instance"]?.cell ?? "-")"
                }
                let receivers = (b["receivers"]?.items ?? []).map {
                    "\($0["receiver"]?.cell ?? "?")@\($0["rssi"]?.cell ?? "?")"
                }
                t.add(
                    id ?? "-", b["proximity"]?.cell ?? "-", b["distance"]?.cell ?? "-",
                    receivers.joined(separator: " "), b["last_seen"]?.cell ?? "-")
            }
            let shown = value["beacons"]?.items.count ?? 0
            if let total = value["total"]?.numberValue, Int(total) > shown {
                return t.text
                    + "(the \(shown) most recently heard of \(Int(total)); GET /v1/beacons?offset=\(shown) for more)\n"
            }
            return t.text
        }
    }
}

struct Regions: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Clients' regions and their state.")
    @OptionGroup var common: Common
    @Argument(help: "Only this client.") var client: String?

    func run() throws {
        try common.run { api throws(APIClient.Failure) in
            var clients: [String]
            if let client {
                clients = [client]
            } else {
                clients = (try api.get("/v1/clients")["clients"]?.items ?? []).compactMap { $0["id"]?.stringValue }
            }
            var t = Table("CLIENT", "REGION", "STATE", "UUID", "MAJOR", "MINOR", "ENTERED")
            var all: [JSONValue] = []
            for c in clients {
                let answer = try api.get("/v1/clients/\(percentEncode(c))/regions")
                all.append(answer)
                for r in answer["regions"]?.items ?? [] {
                    t.add(
                        c, r["id"]?.cell ?? "-", r["state"]?.cell ?? "-", r["uuid"]?.cell ?? "-",
                        r["major"]?.cell ?? "-", r["minor"]?.cell ?? "-", r["entered_at"]?.cell ?? "-")
                }
            }
            print(common.json ? JSONValue.array(all).serialized : t.text)
        }
    }
}

struct Assets: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Assets: positions, zones, last seen.")
    @OptionGroup var common: Common

    func run() throws {
        try common.show("/v1/assets") { value in
            var t = Table("ASSET", "NAME", "POSITION", "ZONES", "LAST_SEEN")
            for a in value["assets"]?.items ?? [] {
                let p = a["position"]
                let position = p.map {
                    $0.isNull ? "-" : "\($0["x"]?.cell ?? "?"),\($0["y"]?.cell ?? "?") L\($0["level"]?.cell ?? "?")"
                }
                t.add(
                    a["id"]?.cell ?? "-", a["name"]?.cell ?? "-", position ?? "-", a["zones"]?.cell ?? "-",
                    a["last_seen"]?.cell ?? "-")
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
            for z in value["zones"]?.items ?? [] {
                let shape =
                    z["receiver"].map { "within \(z["within"]?.cell ?? "?") m of \($0.cell)" }
                    ?? "polygon on level \(z["level"]?.cell ?? "?"), \(z["polygon"]?.items.count ?? 0) points"
                t.add(z["id"]?.cell ?? "-", shape)
            }
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
            print(format == .svg ? map.svg() : map.text(columns: max(20, min(columns, 400))), terminator: "")
        }
    }
}

struct Alarms: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Alarms and whether they are active.")
    @OptionGroup var common: Common

    func run() throws {
        try common.show("/v1/alarms") { value in
            var t = Table("ALARM", "ACTIVE", "ZONES", "ON", "ASSETS")
            for a in value["alarms"]?.items ?? [] {
                t.add(
                    a["id"]?.cell ?? "-", a["active"]?.cell ?? "-", a["zones"]?.cell ?? "-", a["on"]?.cell ?? "-",
                    a["assets"].map { $0.isNull ? "all" : $0.cell } ?? "all")
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
                print(answer.body, terminator: "")
            } else {
                print("alarm \(id) \(active ? "enabled" : "disabled")")
            }
        }
    }
}

struct Outbox: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Webhook backlog and dead letters.")
    @OptionGroup var common: Common

    func run() throws {
        try common.show("/v1/outbox") { value in
            var hooks = Table("WEBHOOK", "STATE", "PENDING", "OLDEST", "DEAD", "DELIVERED", "LAST_ERROR")
            for w in value.array("webhooks").map(StatusReport.Webhook.init(json:)) {
                hooks.add(
                    w.id, w.state.rawValue, "\(w.pending)", w.oldest ?? "-", Self.dead(w), "\(w.delivered)",
                    w.lastError ?? "-")
            }
            var dead = Table("DEAD LETTER", "WEBHOOK", "TYPE", "ENQUEUED", "REASON")
            for d in value["dead_letters"]?.items ?? [] {
                dead.add(
                    d["id"]?.cell ?? "-", d["webhook"]?.cell ?? "-", d["type"]?.cell ?? "-", d["enqueued"]?.cell ?? "-",
                    d["reason"]?.cell ?? "-")
            }
            return hooks.text + "\n\n" + dead.text
        }
    }

    /// Dead letters kept, and how many older ones were discarded past the cap.
    static func dead(_ webhook: StatusReport.Webhook) -> String {
        guard webhook.deadLettersDiscarded > 0 else { return "\(webhook.deadLetters)" }
        return "\(webhook.deadLetters) (+\(webhook.deadLettersDiscarded) discarded)"
    }
}

struct Monitor: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Start (or replace) monitoring a region.")
    @OptionGroup var common: Common
    @Argument var client: String
    @Argument var region: String
    @Option(help: "The beacons' proximity UUID.") var uuid: String
    @Option var major: Int?
    @Option var minor: Int?
    @Option(help: "Dwell alerts, comma-separated durations such as 2m,10m.") var dwell: String?
    @Flag(help: "Emit ranging updates for this region.") var ranging = false
    @Flag(name: .customLong("no-notify-entry")) var noNotifyEntry = false
    @Flag(name: .customLong("no-notify-exit")) var noNotifyExit = false

    func run() throws {
        var members: [(String, JSONValue)] = [("uuid", .string(uuid))]
        if let major { members.append(("major", .number(Double(major)))) }
        if let minor { members.append(("minor", .number(Double(minor)))) }
        if let dwell { members.append(("dwell", .array(dwell.split(separator: ",").map { .string(String($0)) }))) }
        members += [
            ("ranging", .bool(ranging)), ("notify_on_entry", .bool(!noNotifyEntry)),
            ("notify_on_exit", .bool(!noNotifyExit)),
        ]
        try common.run { api throws(APIClient.Failure) in
            let answer = try api.request(
                "PUT", "/v1/clients/\(percentEncode(client))/regions/\(percentEncode(region))",
                body: JSONValue.object(members).serialized)
            print(common.json ? answer.body.trimmingNewline : "monitoring \(client)/\(region)")
        }
    }
}

struct Unmonitor: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Stop monitoring a region.")
    @OptionGroup var common: Common
    @Argument var client: String
    @Argument var region: String

    func run() throws {
        try common.run { api throws(APIClient.Failure) in
            _ = try api.request("DELETE", "/v1/clients/\(percentEncode(client))/regions/\(percentEncode(region))")
            if !common.json { print("stopped monitoring \(client)/\(region)") }
        }
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

extension JSONValue {
    var boolValue: Bool? {
        if case let .bool(b) = self { return b }
        return nil
    }
}

struct TestWebhook: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a webhook one signed test event now and say what its receiver answered.",
        discussion: "The event's type is beacond.webhook.test; it is not stored or sent again. Exit 0 on a 2xx.")
    @OptionGroup var common: Common
    @Argument(help: "The webhook's id in the configuration.") var webhook: String

    func run() throws {
        try common.run { api throws(APIClient.Failure) in
            let response = try api.request("POST", "/v1/webhooks/\(percentEncode(webhook))/test")
            guard !common.json else { return print(response.body) }
            let answer = response.json
            print(
                "\(webhook): HTTP \(answer?["status"]?.cell ?? "-") from \(answer?["url"]?.cell ?? "-") in "
                    + "\(answer?["took_ms"]?.cell ?? "-") ms"
                    + (answer?["signed"]?.boolValue == true ? ", signed" : ", unsigned (no secret_file)"))
        }
    }
}
