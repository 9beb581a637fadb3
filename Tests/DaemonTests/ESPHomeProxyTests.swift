import Foundation
import TestSupport
import Testing

/// SPEC §9, issue 55: ESPHome Bluetooth proxies as receivers, against a fake proxy built on
/// aioesphomeapi's messages (`FakeESPHomeProxy`) — first checked against aioesphomeapi's own
/// client, then beacond against it.
@Suite(.serialized) struct ESPHomeProxyTests {
    static let uuid = "e2c56db5dffb48d2b060d0f5a71096e0"
    static let adverts = [
        FakeESPHomeProxy.Advert.iBeacon(address: "C3:11:22:33:44:55", rssi: -67, uuid: uuid, major: 42, minor: 7),
        FakeESPHomeProxy.Advert(
            address: "00:1A:7D:DA:71:13", rssi: -80, addressType: 0,
            data: "0303aafe0c16aafe10ee02616263646500050954616731"),
    ]

    static let key = "px7tsbK3C7bpXHr2OevEV2ZMg/FXNTw2mNOmi4HlrOA="

    static func config(_ proxy: FakeESPHomeProxy, receiver: String = "esp-aisle", secret: String = "") -> String {
        """
        receivers:
          - {id: \(receiver), position: {x: 4, y: 2}, rssi_at_1m: -59}
        esphome:
          - {receiver: \(receiver), host: 127.0.0.1, port: \(proxy.port)\(secret)}
        clients:
          - id: app
            regions:
              - {id: store, uuid: \(APIDaemon.uuid)}

        """
    }

    /// The receivers that hear the beacon of major 42, minor 7, as `/v1/beacons` lists them.
    static func receivers(_ d: APIDaemon) throws -> [String] {
        let beacons = try d.client.request("GET", "/v1/beacons").object["beacons"] as? [[String: Any]] ?? []
        return beacons.filter { ($0["beacon"] as? [String: Any])?["major"] as? Int == 42 }
            .flatMap { $0["receivers"] as? [[String: Any]] ?? [] }.compactMap { $0["receiver"] as? String }
    }

    /// Plaintext, and encrypted with the key the client is given.
    @Test(arguments: [nil, key])
    func theFakeProxyIsWhatHomeAssistantsClientReads(key: String?) throws {
        let proxy = try FakeESPHomeProxy(adverts: Self.adverts, key: key)
        let check = Process()
        check.executableURL = URL(fileURLWithPath: Executables.toolsPython)
        check.arguments =
            [
                Executables.packageRoot.appendingPathComponent("Tests/DaemonTests/Support/esphome_client_check.py")
                    .path,
                "\(proxy.port)", "2",
            ] + (key.map { [$0] } ?? [])
        let out = Pipe()
        check.standardOutput = out
        try check.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        check.waitUntilExit()
        #expect(check.terminationStatus == 0, "\(text)")
        let lines = text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(lines.first?["model"] as? String == "esp32-c3-devkitm-1")
        #expect(lines.dropFirst().map { $0["data"] as? String } == Self.adverts.map(\.data))
        #expect(lines.dropFirst().map { $0["rssi"] as? Int } == [-67, -80])
        #expect(proxy.messages.contains("SubscribeBluetoothLEAdvertisementsRequest"))
    }

    @Test func aProxysAdvertisementsAreSightingsOfItsReceiver() throws {
        let proxy = try FakeESPHomeProxy(adverts: Self.adverts)
        let d = try APIDaemon(extra: Self.config(proxy))
        try d.start()
        try eventually("the proxy's beacon heard by its receiver", detail: { d.daemon!.logs.joined(separator: "\n") }) {
            try Self.receivers(d) == ["esp-aisle"]
        }
        // Heard from the start: the region's first decision is its state, inside.
        let states = try d.waitForHistory("the region inside on the proxy's sightings") { events in
            events.contains { ($0["data"] as? [String: Any])?["state"] as? String == "inside" }
        }
        #expect(states.contains { $0["type"] as? String == "beacond.region.state" })
        let beacons = try d.client.request("GET", "/v1/beacons").object["beacons"] as? [[String: Any]] ?? []
        let heard = beacons.flatMap { $0["receivers"] as? [[String: Any]] ?? [] }
        #expect(
            heard.contains {
                $0["receiver"] as? String == "esp-aisle" && ($0["rssi"] as? Double).map { abs($0 + 67) < 1 } == true
            })
        // The exchange as Home Assistant's client makes it: Hello (as beacond), authentication,
        // device info, raw advertisements.
        #expect(
            Array(proxy.messages.prefix(4)) == [
                "HelloRequest", "AuthenticationRequest", "DeviceInfoRequest",
                "SubscribeBluetoothLEAdvertisementsRequest",
            ])
        let hello = proxy.log.first { $0["got"] as? String == "HelloRequest" }?["fields"] as? [String: Any]
        #expect(hello?["client_info"] as? String == "beacond")
        let subscribe = proxy.log.first { $0["got"] as? String == "SubscribeBluetoothLEAdvertisementsRequest" }
        #expect((subscribe?["fields"] as? [String: Any])?["flags"] as? Int == 1)
        #expect(d.daemon!.logs.contains { $0.contains("esphome.connected") && $0.contains("esp32-c3-devkitm-1") })
        // Status, metrics, beaconctl status and doctor show the proxy.
        let status = try d.client.request("GET", "/v1/status").object
        let shown = try #require((status["esphome"] as? [[String: Any]])?.first)
        #expect(shown["receiver"] as? String == "esp-aisle" && shown["connected"] as? Bool == true)
        #expect(shown["model"] as? String == "esp32-c3-devkitm-1" && shown["esphome_version"] as? String == "2025.11.0")
        #expect((shown["advertisements"] as? Int ?? 0) > 0 && shown["encrypted"] as? Bool == false)
        let metrics = try d.client.request("GET", "/metrics").body
        #expect(metrics.contains("beacond_esphome_proxy_up{proxy=\"esp-aisle\"} 1"))
        #expect(metrics.contains("beacond_esphome_advertisements_total{proxy=\"esp-aisle\"}"))
        let ctl = try runCommand(Executables.built("beaconctl"), ["--socket", d.socketPath, "status"])
        #expect(ctl.stdout.contains("ESPHOME PROXY") && ctl.stdout.contains("esp-aisle"))
        let doctor = try runCommand(Executables.built("beaconctl"), ["--socket", d.socketPath, "doctor"])
        #expect(
            doctor.stdout.contains("ok    esphome esp-aisle") || doctor.stdout.contains("esphome esp-aisle"),
            "\(doctor.stdout)")
        #expect(!doctor.stdout.contains("FAIL  esphome"), "\(doctor.stdout)")
        #expect(d.stop() == 0)
        #expect(proxy.messages.last == "DisconnectRequest", "a stop says goodbye")
    }

    /// An encrypted proxy, its key in a file only the daemon's user reads: the exchange as
    /// before, under Noise.
    @Test func anEncryptedProxyIsHeardWithItsKey() throws {
        let proxy = try FakeESPHomeProxy(adverts: Self.adverts, key: Self.key)
        let file = proxy.dir.appendingPathComponent("esp-aisle.key").path
        try (Self.key + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o600)
        let d = try APIDaemon(extra: Self.config(proxy, secret: ", encryption_key_file: \(file)"))
        try d.start()
        try eventually("the proxy's beacon heard", detail: { d.daemon!.logs.joined(separator: "\n") }) {
            try Self.receivers(d) == ["esp-aisle"]
        }
        #expect(!d.daemon!.logs.contains { $0.contains("esphome.key_file_exposed") })
        #expect(d.stop() == 0)
        // A key others can read still works, and is told.
        chmod(file, 0o644)
        try d.start()
        try eventually("the exposure told", detail: { d.daemon!.logs.joined(separator: "\n") }) {
            d.daemon!.logs.contains { $0.contains("esphome.key_file_exposed") && $0.contains("chmod 600") }
        }
        #expect(proxy.log.contains { $0["event"] as? String == "handshake-done" })
        #expect(Array(proxy.messages.prefix(2)) == ["HelloRequest", "AuthenticationRequest"])
        #expect(d.stop() == 0)
    }

    /// A key that is not the proxy's, a key for a proxy without encryption, no key for one
    /// with it: each told in words that say what to check, and tried again later.
    @Test(
        arguments: [
            (Self.key, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "it is not the proxy's api: encryption: key:"),
            (nil, Self.key, "closed the connection at the encrypted hello: it has no API encryption"),
            (Self.key, nil, "the proxy uses API encryption: set encryption_key_file"),
        ] as [(String?, String?, String)])
    func aKeyMismatchIsToldPlainly(proxyKey: String?, configured: String?, told: String) throws {
        let proxy = try FakeESPHomeProxy(adverts: Self.adverts, key: proxyKey)
        let d = try APIDaemon(
            extra: Self.config(proxy, secret: configured.map { ", encryption_key: \"\($0)\"" } ?? ""))
        try d.start()
        try eventually("the mismatch told", detail: { d.daemon!.logs.joined(separator: "\n") }) {
            d.daemon!.logs.contains { $0.contains("esphome.disconnected") && $0.contains(told) }
        }
        #expect(try Self.receivers(d).isEmpty)
        let shown = (try d.client.request("GET", "/v1/status").object["esphome"] as? [[String: Any]])?.first
        #expect(shown?["connected"] as? Bool == false)
        #expect((shown?["last_error"] as? String)?.contains(told) == true)
        let doctor = try runCommand(Executables.built("beaconctl"), ["--socket", d.socketPath, "doctor"])
        #expect(doctor.stdout.contains("esphome esp-aisle") && doctor.stdout.contains(told), "\(doctor.stdout)")
        #expect(d.stop() == 0)
    }

    /// `beaconctl doctor` lists the ESPHome devices Avahi resolves on the network that
    /// `esphome:` does not name yet, each with the entry to paste.
    @Test func doctorListsTheProxiesAnnouncedAndNotConfigured() throws {
        let proxy = try FakeESPHomeProxy(adverts: Self.adverts)
        let bus = try PrivateBlueZ()
        try bus.startAvahi(
            services: """
                [{"name": "esp-aisle", "type": "_esphomelib._tcp", "host": "esp-aisle.local", "address": "127.0.0.1",
                  "port": \(proxy.port), "txt": {"version": "2025.11.0"}},
                 {"name": "esp-till", "type": "_esphomelib._tcp", "host": "esp-till.local", "address": "192.168.1.41",
                  "port": 6053, "txt": {"version": "2025.11.0", "friendly_name": "Till",
                  "api_encryption": "Noise_NNpsk0_25519_ChaChaPoly_SHA256"}}]
                """)
        let d = try APIDaemon(extra: Self.config(proxy))
        try d.start()
        let doctor = try runCommand(
            Executables.built("beaconctl"), ["--socket", d.socketPath, "doctor", "--config", d.configPath],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "PATH": "/usr/bin:/bin"])
        let text = doctor.stdout
        #expect(text.contains("esphome discovery: 1 ESPHome devices announced that esphome: does not name"), "\(text)")
        #expect(
            text.contains(
                "- {receiver: esp-till, host: \"192.168.1.41\", port: 6053, encryption_key_file: /etc/beacond/esp-till.key}"
            ),
            "\(text)")
        #expect(!text.contains("receiver: esp-aisle,"), "the configured one is not offered again")
        #expect(d.stop() == 0)
    }

    /// A proxy that restarts (killed, then listening again on its port) is connected to again,
    /// and its advertisements flow on; the drop is told once in the log with its reason.
    @Test func aProxyThatRestartsIsConnectedToAgain() throws {
        var proxy = try FakeESPHomeProxy(adverts: Self.adverts)
        let (port, log) = (proxy.port, proxy.logPath)
        let d = try APIDaemon(extra: Self.config(proxy), monitoring: "enter_sightings: 1, exit_timeout: 30s")
        try d.start()
        try eventually("the proxy's beacon heard") { try Self.receivers(d) == ["esp-aisle"] }
        proxy.stop()
        try eventually("the drop told", detail: { d.daemon!.logs.joined(separator: "\n") }) {
            d.daemon!.logs.contains { $0.contains("esphome.disconnected") && $0.contains("esp-aisle") }
        }
        proxy = try FakeESPHomeProxy(adverts: Self.adverts, port: port, logPath: log)
        try eventually("connected again", timeout: 20, detail: { d.daemon!.logs.joined(separator: "\n") }) {
            proxy.connections == 2
                && proxy.messages.filter { $0 == "SubscribeBluetoothLEAdvertisementsRequest" }.count == 2
        }
        #expect(d.stop() == 0)
    }

    /// As issue 42's test does for ESPresense and OpenMQTTGateway: the pallet at (2, 5) heard by
    /// two ESPHome proxies (r3, r4, their RSSI by the path loss from where it is) and two of the
    /// gateway's receivers (r1, r2, posted) is placed within 1.5 m, by all four.
    @Test func twoProxiesAndTwoReceiversPlaceATag() throws {
        let lines = AssetAPITests.sightings(at: (2, 5))
        func rssi(_ line: String) -> Int {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["rssi"] as? Int ?? 0
        }
        let r3 = try FakeESPHomeProxy(
            adverts: [.init(address: "D0:00:00:00:00:09", rssi: rssi(lines[2]), addressType: 0, data: "020106")],
            rate: 5)
        let r4 = try FakeESPHomeProxy(
            adverts: [.init(address: "D0:00:00:00:00:09", rssi: rssi(lines[3]), addressType: 0, data: "020106")],
            rate: 5)
        let d = try APIDaemon(
            extra: AssetAPITests.site
                + "esphome:\n  - {receiver: r3, host: 127.0.0.1, port: \(r3.port)}\n"
                + "  - {receiver: r4, host: 127.0.0.1, port: \(r4.port)}\n")
        try d.start()
        var position: (x: Double, y: Double, used: Set<String>)?
        try eventually(
            "the pallet placed by all four receivers", timeout: 20, every: 0.25,
            detail: { "\(String(describing: position))" }
        ) {
            try d.post(Array(AssetAPITests.sightings(at: (2, 5))[0..<2]))
            position = try SiteRemoteReceiverTests.position(d)
            return position?.used == ["r1", "r2", "r3", "r4"]
        }
        let p = try #require(position)
        #expect(abs(p.x - 2) < 1.5 && abs(p.y - 5) < 1.5, "placed at (\(p.x), \(p.y)), truly at (2, 5)")
        #expect(d.stop() == 0)
    }

    /// A proxy whose connection nothing accepts (here a listener whose queue is full, as a
    /// host that drops the connection): given up after 10 s, not the kernel's two minutes,
    /// told, and tried again.
    @Test func aConnectionNothingAcceptsIsGivenUp() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        #expect(bound == 0 && listen(listener, 0) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        // Fill its queue: the next connection's SYN is dropped.
        let fillers = (0..<4).map { _ in socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        }
        for fd in fillers {
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        defer { ([listener] + fillers).forEach { close($0) } }
        let d = try APIDaemon(
            extra: "receivers:\n  - {id: esp-aisle, position: {x: 4, y: 2}}\n"
                + "esphome:\n  - {receiver: esp-aisle, host: 127.0.0.1, port: \(port)}\n")
        try d.start()
        try eventually(
            "the unanswered connection told", timeout: 20, detail: { d.daemon!.logs.joined(separator: "\n") }
        ) {
            d.daemon!.logs.contains {
                $0.contains("esphome.disconnected") && $0.contains("no answer to the connection in 10")
            }
        }
        // Status shows it once the loop has published (within a second).
        try eventually("the status's last error") {
            let shown = (try d.client.request("GET", "/v1/status").object["esphome"] as? [[String: Any]])?.first
            return (shown?["last_error"] as? String)?.contains("no answer to the connection") == true
        }
        #expect(d.stop() == 0)
    }

    /// A reload takes a new `esphome:`: the proxy added is connected, the one removed told
    /// goodbye, and the daemon started without proxies connects to its first.
    @Test func aReloadConnectsTheProxiesAddedAndLetsGoOfTheRemoved() throws {
        let first = try FakeESPHomeProxy(adverts: Self.adverts)
        let second = try FakeESPHomeProxy(adverts: Self.adverts, name: "proxy-b")
        let receivers = """
            receivers:
              - {id: esp-a, position: {x: 4, y: 2}}
              - {id: esp-b, position: {x: 8, y: 2}}

            """
        let d = try APIDaemon(extra: receivers)
        try d.start()
        func reload(_ proxies: [(String, FakeESPHomeProxy)], count: Int) throws {
            try d.rewrite(
                extra: receivers + "esphome:\n"
                    + proxies.map { "  - {receiver: \($0.0), host: 127.0.0.1, port: \($0.1.port)}\n" }.joined())
            kill(d.daemon!.process.processIdentifier, SIGHUP)
            try d.daemon!.waitUntil("reload \(count)") { _, logs in
                logs.filter { $0.contains("config.reloaded") }.count == count
            }
        }
        func connected() throws -> [String] {
            let shown = try d.client.request("GET", "/v1/status").object["esphome"] as? [[String: Any]] ?? []
            return shown.filter { $0["connected"] as? Bool == true }.compactMap { $0["receiver"] as? String }
        }
        try reload([("esp-a", first)], count: 1)
        try eventually("the first proxy connected") { try connected() == ["esp-a"] }
        try reload([("esp-b", second)], count: 2)
        try eventually("the second in the first's place", detail: { "\(try? connected() ?? [])" }) {
            try connected() == ["esp-b"] && first.messages.last == "DisconnectRequest"
        }
        #expect(try d.client.request("GET", "/v1/status").object["config_needs_restart"] as? [String] == [])
        #expect(d.stop() == 0)
    }

    /// A store's fifty proxies at once, all on one thread: each connected and heard.
    @Test func fiftyProxiesAtOnce() throws {
        let proxy = try FakeESPHomeProxy(adverts: Self.adverts, rate: 2, count: 50)
        let receivers = proxy.ports.indices.map { "  - {id: esp-\($0), position: {x: \($0 % 10), y: \($0 / 10)}}" }
        let entries = proxy.ports.enumerated().map { "  - {receiver: esp-\($0), host: 127.0.0.1, port: \($1)}" }
        let d = try APIDaemon(
            extra: "receivers:\n" + receivers.joined(separator: "\n") + "\nesphome:\n" + entries.joined(separator: "\n")
                + "\n")
        try d.start()
        var shown: [[String: Any]] = []
        try eventually(
            "every proxy connected and heard", timeout: 20,
            detail: { "\(shown.filter { $0["connected"] as? Bool != true })" }
        ) {
            shown = try d.client.request("GET", "/v1/status").object["esphome"] as? [[String: Any]] ?? []
            return shown.count == 50
                && shown.allSatisfy { $0["connected"] as? Bool == true && ($0["advertisements"] as? Int ?? 0) > 0 }
        }
        #expect(proxy.connections == 50)
        #expect(d.stop() == 0)
    }

    /// What is not a working proxy ends the connection with the reason in the log, and the
    /// daemon tries again later; it never stops the daemon.
    @Test(arguments: [
        ("drop-mid-frame", "the proxy closed the connection"),
        ("oversize", "larger than any ESPHome sends"),
        ("never-hello", "no answer to Hello in 15"),
    ])
    func aBrokenProxyIsToldAndTriedAgain(behaviour: String, told: String) throws {
        let proxy = try FakeESPHomeProxy(adverts: Self.adverts, behaviour: behaviour)
        let d = try APIDaemon(extra: Self.config(proxy))
        try d.start()
        try eventually("the reason told", timeout: 25, detail: { d.daemon!.logs.joined(separator: "\n") }) {
            d.daemon!.logs.contains { $0.contains("esphome.disconnected") && $0.contains(told) }
        }
        try eventually("tried again", timeout: 15) { proxy.connections >= 2 }
        #expect(try d.client.request("GET", "/v1/status").status == 200)
        #expect(d.stop() == 0)
    }
}
