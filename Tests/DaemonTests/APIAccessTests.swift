import Foundation
import TestSupport
import Testing

/// The admin rule of SPEC §4.1, with real peers under other uids (`setpriv` + `curl`):
/// reads for anyone who can reach the socket, changes only for root and `api.admin_group`.
@Suite(.serialized) struct APIAccessTests {
    /// Runs curl on the socket as uid/gid 65534 (nobody/nogroup), with no other groups.
    func curlAsNobody(_ d: APIDaemon, _ arguments: [String]) throws -> (status: Int, body: String) {
        let out = try runCommand(
            URL(fileURLWithPath: "/usr/bin/setpriv"),
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", "curl", "-s", "-w", "\n%{http_code}",
                "--unix-socket",
                d.socketPath,
            ] + arguments)
        let lines = out.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    @Test func aPeerOutsideTheAdminGroupCanReadButNotChange() throws {
        let d = try APIDaemon(extra: "clients: [{id: app, regions: [{id: store, uuid: \(APIDaemon.uuid)}]}]\n")
        try d.start()
        // The socket is 0660; let everyone reach it so that the admin rule is what decides.
        let mode = try FileManager.default.attributesOfItem(atPath: d.socketPath)[.posixPermissions] as? Int
        #expect(mode == 0o660)
        chmod(d.socketPath, 0o666)
        let read = try curlAsNobody(d, ["http://localhost/v1/clients/app/regions"])
        #expect(read.status == 200)
        let put = try curlAsNobody(
            d, ["-X", "PUT", "-d", "{\"uuid\": \"\(APIDaemon.uuid)\"}", "http://localhost/v1/clients/app/regions/x"])
        #expect(put.status == 403)
        #expect(put.body.contains("\"code\":\"forbidden\"") && put.body.contains("beacond-test-admins"))
        #expect(try curlAsNobody(d, ["-X", "DELETE", "http://localhost/v1/clients/app/regions/store"]).status == 403)
        #expect(
            try curlAsNobody(d, ["-X", "POST", "--data-binary", "x", "http://localhost/v1/sightings"]).status == 403)
        // Nothing changed
        let regions = try d.client.request("GET", "/v1/clients/app/regions").object["regions"] as? [[String: Any]]
        #expect(regions?.map { $0["id"] as? String } == ["store"])
        // Root (this test) may
        #expect(try d.client.request("DELETE", "/v1/clients/app/regions/store").status == 204)
        #expect(d.stop() == 0)
    }

    @Test func membersOfTheAdminGroupMayChange() throws {
        // admin_group nogroup (gid 65534): the peer's primary group makes it an admin
        let d = try APIDaemon(
            extra: "clients: [{id: app, regions: [{id: store, uuid: \(APIDaemon.uuid)}]}]\n", adminGroup: "nogroup")
        try d.start()
        chmod(d.socketPath, 0o666)
        #expect(try curlAsNobody(d, ["-X", "DELETE", "http://localhost/v1/clients/app/regions/store"]).status == 204)
        #expect(d.stop() == 0)
    }

    /// Write access taken away by a reload is gone at the next request, not at a restart.
    @Test func anAdminGroupChangedByAReloadAppliesToTheNextRequest() throws {
        let d = try APIDaemon(
            extra: "clients: [{id: app, regions: [{id: store, uuid: \(APIDaemon.uuid)}]}]\n", adminGroup: "nogroup")
        try d.start()
        chmod(d.socketPath, 0o666)
        let put = ["-X", "PUT", "-d", "{\"uuid\": \"\(APIDaemon.uuid)\"}", "http://localhost/v1/clients/app/regions/a"]
        #expect(try curlAsNobody(d, put).status == 200)

        let text = try String(contentsOfFile: d.configPath, encoding: .utf8)
        try text.replacingOccurrences(of: "admin_group: nogroup", with: "admin_group: beacond-test-admins")
            .write(toFile: d.configPath, atomically: true, encoding: .utf8)
        kill(d.daemon!.process.processIdentifier, SIGHUP)
        try d.daemon!.waitUntil("the reload") { _, logs in logs.contains { $0.contains("config.reloaded") } }
        let refused = try curlAsNobody(d, put.dropLast() + ["http://localhost/v1/clients/app/regions/b"])
        #expect(refused.status == 403)
        #expect(refused.body.contains("beacond-test-admins"))
        #expect(!d.daemon!.logs.contains { $0.contains("config.needs_restart") })
        let status = try d.client.request("GET", "/v1/status").object
        #expect(status["config_needs_restart"] as? [String] == [])
        #expect(d.stop() == 0)
    }

    @Test func aStaleSocketIsReplacedAndALiveOneIsNot() throws {
        let d = try APIDaemon()
        try d.start()
        d.crash()  // kill -9 leaves the socket file behind
        #expect(FileManager.default.fileExists(atPath: d.socketPath))
        try d.start()  // replaced
        // A second daemon on the same socket (with a state directory of its own, which would
        // otherwise be refused first: StateDirectoryLockTests) refuses to start (69) and
        // leaves the first alone
        let config = d.dir.appendingPathComponent("second.yaml").path
        try
            "gateway: {id: second, state_dir: \(d.dir.appendingPathComponent("state2").path)}\napi: {socket: \(d.socketPath)}\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        let second = try runCommand(
            Executables.built("beacond"), ["--config", config],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent"])
        #expect(second.status == 69)
        #expect(second.stderr.contains("another daemon is listening"))
        #expect(try d.client.request("GET", "/v1/status").status == 200)
        #expect(d.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: d.socketPath), "a clean stop removes the socket")
    }
}
