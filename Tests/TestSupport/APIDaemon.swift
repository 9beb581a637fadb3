import Foundation

/// beacond with its API on a socket in a temporary directory and no system bus (BlueZ is
/// waited for, not needed): sightings come in through `POST /v1/sightings`, as from a
/// remote receiver, so every API test drives the real daemon end to end.
public final class APIDaemon: @unchecked Sendable {
    public let dir: URL
    public let configPath: String
    public var socketPath: String { dir.appendingPathComponent("api.sock").path }
    public var client: UnixHTTPClient { UnixHTTPClient(socketPath: socketPath) }
    public private(set) var daemon: RunningDaemon?
    public static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    /// `extra` is appended to a config with a gateway, the socket, the state directory and
    /// fast monitoring (one sighting enters, 1 s of silence exits).
    public init(
        extra: String = "", monitoring: String = "enter_sightings: 1, exit_timeout: 1s",
        adminGroup: String = "beacond-test-admins", dir: URL? = nil, gatewayID: String = "api-test"
    ) throws {
        self.dir = try dir ?? Executables.temporaryDirectory()
        configPath = self.dir.appendingPathComponent("beacond.yaml").path
        header = """
            gateway: {id: \(gatewayID), state_dir: \(self.dir.appendingPathComponent("state").path)}
            api: {socket: \(self.dir.appendingPathComponent("api.sock").path), admin_group: \(adminGroup)}
            monitoring: {\(monitoring)}

            """
        try rewrite(extra: extra)
    }

    private let header: String

    /// Replaces the configuration file's sections after the fixed header (for reload tests).
    public func rewrite(extra: String) throws {
        try (header + extra).write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// Starts the daemon (with `arguments` after `--config`) and waits until its socket answers.
    public func start(
        arguments: [String] = [], environment extra: [String: String] = [:], launcher: [String] = [],
        waitForSocket: Bool = true
    ) throws {
        var environment = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(dir.path)/no-bus", "PATH": "/usr/bin:/bin"]
        environment.merge(extra) { _, b in b }
        daemon = try RunningDaemon(
            arguments: ["--config", configPath] + arguments, environment: environment, launcher: launcher)
        guard waitForSocket else { return }
        try eventually("the API socket to answer", detail: { "logs:\n\(self.daemon!.logs.joined(separator: "\n"))" }) {
            (try? client.request("GET", "/v1/status"))?.status == 200
        }
    }

    /// SIGTERM and the exit status.
    @discardableResult
    public func stop() -> Int32 { daemon?.stop() ?? -1 }

    /// `kill -9`: no chance to flush anything.
    public func crash() {
        guard let daemon else { return }
        kill(daemon.process.processIdentifier, SIGKILL)
        daemon.process.waitUntilExit()
    }

    /// A sighting record line for an iBeacon, at the current time.
    /// A sighting record stamped now, or `clockAhead` seconds later (a relay whose clock runs fast).
    public static func sighting(
        major: Int, minor: Int = 1, rssi: Int = -60, receiver: String = "hci0", clockAhead: Double = 0
    ) -> String {
        let hex = uuid.replacingOccurrences(of: "-", with: "").lowercased()
        let payload = "0215" + hex + String(format: "%04x%04x", major, minor) + "c5"
        let t = String(format: "%.3f", Date().timeIntervalSince1970 + clockAhead)
        return
            "{\"t\":\(t),\"receiver\":\"\(receiver)\",\"address\":\"C3:11:22:33:44:\(String(format: "%02X", major % 256))\","
            + "\"rssi\":\(rssi),\"manufacturer_data\":{\"76\":\"\(payload)\"}}"
    }

    /// beacond's default calibration UUID (`calibration.uuid`).
    public static let calibrationUUID = "B3AC0CA1-1B8A-4E5D-9C1E-0CA11B8A7E00"

    /// The major and minor receiver `id` advertises as, worked out here independently of the
    /// daemon: the 32-bit FNV-1a hash of its id.
    public static func calibrationIdentity(_ id: String) -> (major: Int, minor: Int) {
        var hash: UInt32 = 2_166_136_261
        for byte in id.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return (Int(hash >> 16), Int(hash & 0xFFFF))
    }

    /// A sighting record of receiver `advertiser`'s calibration advertisement heard by `hearer`.
    public static func calibrationSighting(advertiser: String, hearer: String, rssi: Int) -> String {
        let id = calibrationIdentity(advertiser)
        let hex = calibrationUUID.replacingOccurrences(of: "-", with: "").lowercased()
        let payload = "0215" + hex + String(format: "%04x%04x", id.major, id.minor) + "c5"
        let t = String(format: "%.3f", Date().timeIntervalSince1970)
        return
            "{\"t\":\(t),\"receiver\":\"\(hearer)\",\"address\":\"CA:11:00:00:00:01\","
            + "\"rssi\":\(rssi),\"manufacturer_data\":{\"76\":\"\(payload)\"}}"
    }

    /// Posts sighting lines and checks they were all accepted.
    public func post(_ lines: [String]) throws {
        let response = try client.request("POST", "/v1/sightings", body: lines.joined(separator: "\n") + "\n")
        guard response.status == 202 else {
            throw TestFailure("sightings refused: \(response.status) \(response.body)")
        }
    }

    /// The stored history (up to 1000 events), each as a JSON object.
    public func history(type: String? = nil) throws -> [[String: Any]] {
        let query = "/v1/events?limit=1000" + (type.map { "&type=\($0)" } ?? "")
        return (try client.request("GET", query).object["events"] as? [[String: Any]]) ?? []
    }

    /// Waits until the engine has taken `sightings` sightings; returns `GET /v1/status`.
    public func waitForSightings(_ sightings: Int, timeout: Double = 10) throws -> [String: Any] {
        try waitForStatus("\(sightings) sightings", timeout: timeout) {
            ($0["counts"] as? [String: Any])?["sightings"] as? Int == sightings
        }
    }

    /// Waits until `GET /v1/status` satisfies `condition`; returns it.
    @discardableResult
    public func waitForStatus(_ what: String, timeout: Double = 10, _ condition: ([String: Any]) -> Bool) throws
        -> [String: Any]
    {
        var status: [String: Any] = [:]
        try eventually(what, timeout: timeout, detail: { "status: \(status)" }) {
            status = try client.request("GET", "/v1/status").object
            return condition(status)
        }
        return status
    }

    /// Waits until the history satisfies `condition`.
    public func waitForHistory(
        _ what: String, timeout: Double = 10, _ condition: ([[String: Any]]) -> Bool
    ) throws -> [[String: Any]] {
        var last: [[String: Any]] = []
        try eventually(
            what, timeout: timeout,
            detail: {
                "history: \(last.map { "\($0["type"] ?? "") \($0["subject"] ?? "")" })\nlogs:\n"
                    + (self.daemon?.logs.joined(separator: "\n") ?? "")
            }
        ) {
            last = try history()
            return condition(last)
        }
        return last
    }
}

/// The test webhook receiver (Tests/DaemonTests/Support/webhook_receiver.py): a real HTTP
/// server that checks signatures with Python's hmac and logs every request.
public final class WebhookReceiver: @unchecked Sendable {
    public let process = Process()
    public let port: Int
    public let logPath: String

    public init(
        secret: String? = nil, standardSecret: String? = nil, fail: Int = 0, failStatus: Int = 500,
        status: Int = 200, hang: Bool = false, delay: Double = 0, strict: Bool = false, again: WebhookReceiver? = nil
    ) throws {
        // `again`: a receiver that was stopped, started again on its port, logging on in its file.
        logPath = try again?.logPath ?? Executables.temporaryDirectory().appendingPathComponent("requests.jsonl").path
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        var arguments = [
            standardSecret == nil ? "python3" : Executables.toolsPython,
            Executables.packageRoot.appendingPathComponent("Tests/DaemonTests/Support/webhook_receiver.py").path,
            "--log", logPath, "--fail", "\(fail)", "--fail-status", "\(failStatus)", "--status", "\(status)",
        ]
        if let secret { arguments += ["--secret", secret] }
        if let standardSecret { arguments += ["--standard-secret", standardSecret] }
        if hang { arguments.append("--hang") }
        if strict { arguments.append("--strict") }
        if delay > 0 { arguments += ["--delay", "\(delay)"] }
        if let again { arguments += ["--port", "\(again.port)"] }
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        var line = Data()
        while true {
            let byte = out.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data([10]) { break }
            line.append(byte)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            throw TestFailure("the webhook receiver did not start")
        }
        self.port = port
    }

    deinit { stop() }

    /// SIGKILL: the receiver is gone (connections refused) until started `again`.
    public func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    public var url: String { "http://127.0.0.1:\(port)/hook" }

    /// Every request so far, in arrival order.
    public var requests: [[String: Any]] {
        guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// The events of the accepted (2xx) requests, each id once, in order, with the gateway that
    /// sent it (`X-Beacond-Gateway`) as `sender`.
    public var delivered: [[String: Any]] {
        var seen = Set<String>()
        return requests.filter { ($0["status"] as? Int).map { (200..<300).contains($0) } ?? false }
            .flatMap { request in
                let sender = (request["headers"] as? [String: Any])?["x-beacond-gateway"] as? String ?? "?"
                return (request["events"] as? [[String: Any]] ?? []).map {
                    $0.merging(["sender": sender]) { a, _ in a }
                }
            }
            .filter { seen.insert($0["id"] as? String ?? "").inserted }
    }

    /// Event ids of the accepted (2xx) requests, in order.
    public var acceptedIDs: [String] {
        requests.filter { ($0["status"] as? Int).map { (200..<300).contains($0) } ?? false }
            .flatMap { $0["ids"] as? [String] ?? [] }
    }

    public func waitUntil(_ what: String, timeout: Double = 15, _ condition: ([[String: Any]]) -> Bool) throws {
        try eventually(what, timeout: timeout, detail: { "requests: \(self.requests)" }) { condition(requests) }
    }
}
