import Foundation
import TestSupport
import Testing

@testable import BlueZ

/// Avahi's D-Bus face (a stand-in on a private bus, with avahi-daemon's signatures): the
/// ESPHome devices announced on the network, resolved, for `beaconctl doctor`.
@Suite(.serialized) struct AvahiBrowserTests {
    static let services = """
        [{"name": "esp-aisle-3", "type": "_esphomelib._tcp", "host": "esp-aisle-3.local", "address": "192.168.1.40",
          "port": 6053, "txt": {"mac": "aabbcc001122", "version": "2025.11.0", "friendly_name": "Aisle 3",
          "api_encryption": "Noise_NNpsk0_25519_ChaChaPoly_SHA256"}},
         {"name": "printer", "type": "_ipp._tcp", "host": "printer.local", "address": "192.168.1.9", "port": 631,
          "txt": {}}]
        """

    @Test func theESPHomeDevicesAnnouncedAreListedResolved() throws {
        let bus = try PrivateBlueZ()
        try bus.startAvahi(services: Self.services)
        setenv("DBUS_SYSTEM_BUS_ADDRESS", bus.address, 1)
        defer { unsetenv("DBUS_SYSTEM_BUS_ADDRESS") }
        let found = try AvahiBrowser.browse(type: "_esphomelib._tcp")
        #expect(found.map(\.name) == ["esp-aisle-3"], "only ESPHome's service type")
        #expect(found.first?.address == "192.168.1.40" && found.first?.port == 6053)
        #expect(found.first?.txt["api_encryption"] == "Noise_NNpsk0_25519_ChaChaPoly_SHA256")
        #expect(found.first?.txt["friendly_name"] == "Aisle 3")
    }

    @Test func withoutAvahiTheBrowseSaysSo() throws {
        let bus = try PrivateBlueZ()
        setenv("DBUS_SYSTEM_BUS_ADDRESS", bus.address, 1)
        defer { unsetenv("DBUS_SYSTEM_BUS_ADDRESS") }
        #expect(throws: DBusFailure.self) { try AvahiBrowser.browse(type: "_esphomelib._tcp", waitMs: 500) }
    }
}
