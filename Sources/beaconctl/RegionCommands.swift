import APIModel
import ArgumentParser
import BeaconCore
import BeaconRuntime
import POSIX

#if canImport(Glibc)
    import Glibc
#endif

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
                clients = ClientList(json: try api.get("/v1/clients")).clients.map(\.id)
            }
            var t = Table("CLIENT", "REGION", "STATE", "UUID", "MAJOR", "MINOR", "ENTERED")
            var all: [JSONValue] = []
            for c in clients {
                let answer = try api.get("/v1/clients/\(percentEncode(c))/regions")
                all.append(answer)
                for r in RegionList(json: answer).regions {
                    t.add(
                        c, r.spec.id, r.state, r.spec.uuid.description, r.spec.major.map(String.init) ?? "-",
                        r.spec.minor.map(String.init) ?? "-", r.enteredAt ?? "-")
                }
            }
            writeOut(common.json ? JSONValue.array(all).serialized : t.text)
        }
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
            writeOut(common.json ? answer.body.trimmingNewline : "monitoring \(client)/\(region)")
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
            if !common.json { writeOut("stopped monitoring \(client)/\(region)") }
        }
    }
}
