import Foundation
import TestSupport
import Testing

/// SPEC §6.3 with a real Home Assistant 2024.1.6 (PyPI, `scripts/home-assistant`): its MQTT
/// integration, pointed at the test broker through a stored config entry, takes the site's
/// discovery as a user's would. Its recorder and registries then say what it made of it.
@Suite(.serialized) struct HomeAssistantTests {
    static let venv =
        ProcessInfo.processInfo.environment["BEACOND_HA_VENV"]
        ?? Executables.packageRoot.appendingPathComponent(".build/ha-venv").path

    /// A private Home Assistant configuration: its MQTT entry on `broker`, the recorder
    /// committing every second, the web server on a free port.
    static func configure(_ dir: URL, broker: PrivateBroker) throws {
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent(".storage"), withIntermediateDirectories: true)
        try """
        homeassistant:
          name: beacond-test
          latitude: 0
          longitude: 0
          elevation: 0
          unit_system: metric
          time_zone: UTC
        http:
          server_host: 127.0.0.1
          server_port: \(try freeLoopbackPort())
        recorder:
          commit_interval: 1
        logger:
          default: warning

        """.write(to: dir.appendingPathComponent("configuration.yaml"), atomically: true, encoding: .utf8)
        let entry: [String: Any] = [
            "entry_id": "beacondtestmqtt", "version": 1, "minor_version": 1, "domain": "mqtt", "title": "test broker",
            "data": ["broker": "127.0.0.1", "port": broker.port], "options": [String: Any](),
            "pref_disable_new_entities": false, "pref_disable_polling": false, "source": "user",
            "unique_id": NSNull(), "disabled_by": NSNull(),
        ]
        let entries: [String: Any] = [
            "version": 1, "minor_version": 1, "key": "core.config_entries", "data": ["entries": [entry]],
        ]
        try JSONSerialization.data(withJSONObject: entries).write(
            to: dir.appendingPathComponent(".storage/core.config_entries"))
    }

    /// The states Home Assistant's recorder keeps for `entity`, oldest first.
    static func recorded(_ dir: URL, _ entity: String) throws -> [String] {
        let query = """
            import sqlite3, sys
            try:
                c = sqlite3.connect(sys.argv[1])
                rows = c.execute("select s.state from states s join states_meta m on s.metadata_id = m.metadata_id "
                                 "where m.entity_id = ? order by s.state_id", (sys.argv[2],)).fetchall()
                print("\\n".join(r[0] for r in rows))
            except sqlite3.Error:
                pass
            """
        let r = try runCommand(
            URL(fileURLWithPath: "/usr/bin/python3"),
            ["-c", query, dir.appendingPathComponent("home-assistant_v2.db").path, entity])
        return r.stdout.split(separator: "\n").map(String.init)
    }

    static func registry(_ dir: URL, _ name: String) -> [String: Any]? {
        guard let data = FileManager.default.contents(atPath: dir.appendingPathComponent(".storage/\(name)").path)
        else { return nil }
        return (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["data"] as? [String: Any]
    }

    @Test func homeAssistantTracksTheAssetAndSeesTheSiteGo() throws {
        let hass = URL(fileURLWithPath: Self.venv + "/bin/hass")
        guard FileManager.default.isExecutableFile(atPath: hass.path) else {
            throw TestFailure("no Home Assistant at \(hass.path): run ./scripts/home-assistant (scripts/test does)")
        }
        let broker = try PrivateBroker()
        let gw1 = try APIDaemon(extra: SiteOutputTests.site(broker, homeAssistant: true), gatewayID: "gw1")
        try gw1.start()
        try SiteOutputTests.walk(gw1, to: (2, 5), until: "zone.enter") { !SiteOutputTests.zoneEvents($0).isEmpty }

        let dir = try Executables.temporaryDirectory().appendingPathComponent("ha")
        try Self.configure(dir, broker: broker)
        let ha = Process()
        ha.executableURL = hass
        ha.arguments = ["-c", dir.path, "--skip-pip"]
        ha.standardOutput = FileHandle.nullDevice
        ha.standardError = FileHandle.nullDevice
        try ha.run()
        defer {
            kill(ha.processIdentifier, SIGKILL)
            ha.waitUntilExit()
        }
        let entity = "device_tracker.beacond_store_1_pallet_9"
        var running = true
        func waitFor(_ what: String, timeout: Double = 90, _ done: () throws -> Bool) throws {
            try eventually(
                what, timeout: timeout, every: 0.5, detail: { "recorded \((try? Self.recorded(dir, entity)) ?? [])" }
            ) {
                if try done() { return true }
                // Keep the pallet heard, in the dock, with its battery (2950 mV) in a TLM frame.
                if running { try gw1.post(AssetAPITests.sightings(at: (2, 5)) + [Self.tlm(millivolts: 2950)]) }
                return false
            }
        }
        try waitFor("Home Assistant to record the pallet in the dock") { try Self.recorded(dir, entity).last == "dock" }

        // Its registries: the entity by our unique_id on the MQTT platform, on a device of its own.
        try waitFor("the registries saved") {
            (Self.registry(dir, "core.entity_registry")?["entities"] as? [[String: Any]] ?? []).contains {
                $0["entity_id"] as? String == entity
            }
        }
        let entities = Self.registry(dir, "core.entity_registry")?["entities"] as? [[String: Any]] ?? []
        let tracker = try #require(entities.first { $0["entity_id"] as? String == entity })
        #expect(tracker["unique_id"] as? String == "beacond_store-1_pallet-9")
        #expect(tracker["platform"] as? String == "mqtt")
        let devices = Self.registry(dir, "core.device_registry")?["devices"] as? [[String: Any]] ?? []
        let device = try #require(devices.first { $0["id"] as? String == tracker["device_id"] as? String })
        #expect(device["name"] as? String == "Pallet 9" && device["manufacturer"] as? String == "beacond")

        // Its tag's battery (SPEC §7.5): a battery sensor on the same device, its state recorded
        // (2950 mV: 92 % by the coin-cell estimate).
        let battery = "sensor.beacond_store_1_pallet_9_battery"
        try waitFor("Home Assistant to record the battery") { try Self.recorded(dir, battery).last == "92" }
        try waitFor("the sensor registered") {
            (Self.registry(dir, "core.entity_registry")?["entities"] as? [[String: Any]] ?? []).contains {
                $0["entity_id"] as? String == battery
            }
        }
        let sensor = try #require(
            (Self.registry(dir, "core.entity_registry")?["entities"] as? [[String: Any]] ?? []).first {
                $0["entity_id"] as? String == battery
            })
        #expect(sensor["device_id"] as? String == tracker["device_id"] as? String, "on the pallet's device")
        #expect(sensor["unique_id"] as? String == "beacond_store-1_pallet-9_battery")
        #expect(
            sensor["original_device_class"] as? String == "battery"
                && sensor["entity_category"] as? String == "diagnostic")

        // The dock's occupancy (SPEC §8): a measurement sensor on the site's zones device,
        // recorded as the pallet's one asset in it.
        let occupancy = "sensor.beacond_store_1_zone_dock_occupancy"
        try waitFor("Home Assistant to record the dock's occupancy") { try Self.recorded(dir, occupancy).last == "1" }
        try waitFor("the occupancy sensor registered") {
            (Self.registry(dir, "core.entity_registry")?["entities"] as? [[String: Any]] ?? []).contains {
                $0["entity_id"] as? String == occupancy
            }
        }
        let zoneSensor = try #require(
            (Self.registry(dir, "core.entity_registry")?["entities"] as? [[String: Any]] ?? []).first {
                $0["entity_id"] as? String == occupancy
            })
        #expect(zoneSensor["unique_id"] as? String == "beacond_store-1_zone_dock_occupancy")
        #expect(zoneSensor["device_id"] as? String != tracker["device_id"] as? String, "the zones' own device")

        // The site's only gateway stops: its status goes offline, and the tracker unavailable.
        #expect(gw1.stop() == 0)
        running = false
        try waitFor("the tracker unavailable", timeout: 30) { try Self.recorded(dir, entity).last == "unavailable" }
    }

    /// An Eddystone-TLM frame from the pallet's address, as its tag interleaves them.
    static func tlm(millivolts: Int) -> String {
        let t = String(format: "%.3f", Date().timeIntervalSince1970)
        let mv = String(format: "%04x", millivolts)
        return "{\"t\":\(t),\"receiver\":\"r1\",\"address\":\"d0:00:00:00:00:09\",\"rssi\":-70,"
            + "\"service_data\":{\"0000feaa-0000-1000-8000-00805f9b34fb\":\"2000\(mv)1580000003e8000003e8\"}}"
    }
}
