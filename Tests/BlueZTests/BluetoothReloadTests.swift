import Foundation
import TestSupport
import Testing

/// `bluetooth:` changed and applied by SIGHUP, with no restart, against python-dbusmock's
/// bluez5 template: adapters let go and taken up, the RSSI floor and the scan mode changed
/// on the adapters kept.
@Suite(.serialized) struct BluetoothReloadTests {
    let live = LiveBlueZTests()

    func reload(_ daemon: RunningDaemon, dir: URL, bluetooth: String, reloads: Int) throws {
        _ = try LiveBlueZTests.config(in: dir, bluetooth: bluetooth)
        kill(daemon.process.processIdentifier, SIGHUP)
        try daemon.waitUntil("reload \(reloads)") { _, logs in
            logs.filter { $0.contains("config.reloaded") }.count == reloads
        }
    }

    @Test func adaptersAndTheRSSIFloorChangeOnAReload() throws {
        let bus = try PrivateBlueZ()
        try bus.startBlueZ()
        try bus.drive("add-adapter", "hci0")
        try bus.drive("add-adapter", "hci1")
        let uuid = LiveBlueZTests.uuid
        // A device hci1 has already heard: in BlueZ's cache when the daemon starts.
        try bus.drive("ibeacon", "hci1", "C3:11:22:33:44:57", uuid, "42", "9", "-60", "1")
        let dir = try Executables.temporaryDirectory()
        let daemon = try live.startDaemon(bus, bluetooth: "adapters: [hci0], min_rssi: -100", in: dir)
        try daemon.waitUntil("discovery on hci0", live.has("adapter.state", "\"discovering\":true"))
        #expect(try bus.calls("hci1").isEmpty)
        // Not the daemon's: hci1 is not in bluetooth.adapters (sent first, so taken in first).
        try bus.drive("ibeacon", "hci1", "C3:11:22:33:44:57", uuid, "42", "9", "-60", "3")
        try bus.drive("ibeacon", "hci0", "C3:11:22:33:44:55", uuid, "42", "7", "-60", "3")
        try daemon.waitUntil("region.state inside", live.has("region.state", "\"state\":\"inside\""))

        // hci0 let go, hci1 taken up with the new floor.
        try reload(daemon, dir: dir, bluetooth: "adapters: [hci1], min_rssi: -80", reloads: 1)
        try daemon.waitUntil("StartDiscovery on hci1") { _, _ in
            (try? bus.calls("hci1"))?.contains("StartDiscovery") == true
        }
        #expect(try bus.calls("hci0") == ["SetDiscoveryFilter", "StartDiscovery", "StopDiscovery"])
        #expect(try bus.drive("filters", "hci1") == "-80\n")
        try daemon.waitUntil(
            "hci0 released", live.has("adapter.state", "\"adapter\":\"hci0\",\"present\":false"))
        #expect(!daemon.logs.contains { $0.contains("config.needs_restart") }, "\(daemon.logs)")

        // Heard through hci1 only now: hci0's advertisements are no longer the daemon's.
        try bus.drive("ibeacon", "hci0", "C3:11:22:33:44:55", uuid, "42", "7", "-60", "3")
        try bus.drive("ibeacon", "hci1", "C3:11:22:33:44:56", uuid, "42", "8", "-60", "3")
        let summary = { daemon.logs.first { $0.contains("engine.summary") } ?? "" }

        // A new floor on the adapter kept: its session restarts with it.
        try reload(daemon, dir: dir, bluetooth: "adapters: [hci1], min_rssi: -70", reloads: 2)
        try daemon.waitUntil("the new filter on hci1") { _, _ in
            (try? bus.drive("filters", "hci1")) == "-80\n-70\n"
        }
        #expect(
            try bus.calls("hci1") == [
                "SetDiscoveryFilter", "StartDiscovery", "StopDiscovery", "SetDiscoveryFilter", "StartDiscovery",
            ])
        #expect(try bus.calls("hci0").count == 3)
        #expect(daemon.stop() == 0)
        // Decoded: hci0's 3 before the reload and hci1's 3 after it; none of the others.
        #expect(summary().isLog("engine.summary", ["decoded": "6", "beacons": "2"]), "\(summary())")
    }

    @Test func theScanModeChangesOnAReload() throws {
        let bus = try PrivateBlueZ()
        try bus.startBlueZ()
        try bus.drive("add-adapter", "hci0")
        try bus.drive("monitor-capable", "hci0")
        let dir = try Executables.temporaryDirectory()
        let daemon = try live.startDaemon(bus, bluetooth: "scan: active", in: dir)
        try daemon.waitUntil("discovery", live.has("adapter.state", "\"discovering\":true"))
        try reload(daemon, dir: dir, bluetooth: "scan: passive", reloads: 1)
        try daemon.waitUntil("passive scanning") { _, logs in
            logs.contains { $0.isLog("adapter.passive_scanning", ["adapter": "hci0"]) }
        }
        #expect(try bus.calls("hci0") == ["SetDiscoveryFilter", "StartDiscovery", "StopDiscovery", "RegisterMonitor"])
        try reload(daemon, dir: dir, bluetooth: "scan: active", reloads: 2)
        try daemon.waitUntil("active again") { _, _ in
            (try? bus.calls("hci0"))?.last == "StartDiscovery"
        }
        #expect(
            try bus.calls("hci0") == [
                "SetDiscoveryFilter", "StartDiscovery", "StopDiscovery", "RegisterMonitor", "UnregisterMonitor",
                "SetDiscoveryFilter", "StartDiscovery",
            ])
        #expect(daemon.stop() == 0)
    }
}
