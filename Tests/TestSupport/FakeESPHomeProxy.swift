import Foundation

/// A fake ESPHome Bluetooth proxy (Tests/DaemonTests/Support/esphome_proxy.py): the server side
/// of ESPHome's native API, built on aioesphomeapi's own messages, sending `adverts` once a
/// client subscribes.
public final class FakeESPHomeProxy: @unchecked Sendable {
    public let process = Process()
    public let port: Int
    /// Every proxy's port (`count` of them; the first is `port`).
    public let ports: [Int]
    public let logPath: String
    public let dir: URL

    /// An advertisement as the proxy forwards it: its address, RSSI, address type and AD bytes.
    public struct Advert: Sendable {
        public var address: String
        public var rssi: Int
        public var addressType: Int
        public var data: String
        public init(address: String, rssi: Int, addressType: Int = 1, data: String) {
            (self.address, self.rssi, self.addressType, self.data) = (address, rssi, addressType, data)
        }

        /// An iBeacon of `uuid` (32 hex digits), major and minor, measured power −59.
        public static func iBeacon(address: String, rssi: Int, uuid: String, major: Int, minor: Int) -> Advert {
            let m = String(format: "%04x%04x", major, minor)
            return Advert(address: address, rssi: rssi, data: "0201061aff4c000215" + uuid + m + "c5")
        }
    }

    public init(
        adverts: [Advert] = [], rate: Double = 10, name: String = "proxy-a", behaviour: String = "normal",
        password: String? = nil, key: String? = nil, port fixed: Int? = nil, logPath again: String? = nil,
        count: Int = 1
    ) throws {
        dir = try Executables.temporaryDirectory()
        logPath = again ?? dir.appendingPathComponent("proxy.jsonl").path
        let advertsPath = dir.appendingPathComponent("adverts.jsonl").path
        let lines = adverts.map {
            "{\"address\": \"\($0.address)\", \"rssi\": \($0.rssi), \"address_type\": \($0.addressType), \"data\": \"\($0.data)\"}"
        }
        try lines.joined(separator: "\n").write(toFile: advertsPath, atomically: true, encoding: .utf8)
        let portFile = dir.appendingPathComponent("port").path
        process.executableURL = URL(fileURLWithPath: Executables.toolsPython)
        var arguments = [
            Executables.packageRoot.appendingPathComponent("Tests/DaemonTests/Support/esphome_proxy.py").path,
            "--port-file", portFile, "--log", logPath, "--adverts", advertsPath, "--rate", "\(rate)", "--name", name,
            "--behaviour", behaviour,
        ]
        if let password { arguments += ["--password", password] }
        if let key { arguments += ["--key", key] }
        if count > 1 { arguments += ["--count", "\(count)"] }
        if let fixed { arguments += ["--port", "\(fixed)"] }
        process.arguments = arguments
        try process.run()
        var found: [Int] = []
        try eventually("the fake proxy to listen", timeout: 20) {
            found = ((try? String(contentsOfFile: portFile, encoding: .utf8)) ?? "").split(separator: "\n")
                .compactMap { Int($0) }
            return !found.isEmpty
        }
        ports = found
        port = found[0]
    }

    deinit { stop() }

    /// SIGKILL: the proxy is gone (connections refused), as a proxy that lost power.
    public func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// What the proxy read and did, in order: `{"got": "<message>", "fields": {…}}` or
    /// `{"event": "connected" | "disconnected" | …}`.
    public var log: [[String: Any]] {
        guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    public var messages: [String] { log.compactMap { $0["got"] as? String } }
    public var connections: Int { log.filter { $0["event"] as? String == "connected" }.count }
}
