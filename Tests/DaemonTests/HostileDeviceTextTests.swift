import Foundation
import TestSupport
import Testing

/// What a device on the LAN says about itself reaches the operator's terminal only written
/// out (issue 61, M1 and M4): a proxy's name, a device's mDNS record. Before, `beaconctl
/// status` and `doctor` printed them raw: the screen was cleared, `[OK]` lines appeared that
/// doctor had not written, and doctor's "entry to paste" could be rewritten by a record.
@Suite(.serialized) struct HostileDeviceTextTests {
    /// Retitles the terminal, clears it, returns the carriage and forges two verdicts.
    static let forged = "\u{1b}]0;pwned\u{07}\u{1b}[2J\r[ok] daemon: all good\n[ok] esphome esp-aisle: fine\u{202e}"

    /// Nothing of `text` can move the cursor or start a line of its own.
    static func expectInert(_ text: String, _ command: String) {
        #expect(!text.unicodeScalars.contains { $0.value == 0x1B || $0 == "\r" || $0.value == 0x202E }, "\(command)")
        let lines = text.split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("[ok] daemon: all good") }, "\(command): \(text)")
        #expect(!lines.contains { $0.hasPrefix("[ok] esphome esp-aisle: fine") }, "\(command): \(text)")
    }

    @Test func aProxysNameIsShownWrittenOut() throws {
        let proxy = try FakeESPHomeProxy(adverts: ESPHomeProxyTests.adverts, name: Self.forged)
        let d = try APIDaemon(extra: ESPHomeProxyTests.config(proxy))
        try d.start()
        try eventually("the proxy's advertisements heard") { try ESPHomeProxyTests.receivers(d) == ["esp-aisle"] }
        let status = try runCommand(Executables.built("beaconctl"), ["--socket", d.socketPath, "status"])
        Self.expectInert(status.stdout, "status")
        #expect(status.stdout.contains("\\u001b]0;pwned\\u0007"), "written out, still readable: \(status.stdout)")
        let doctor = try runCommand(Executables.built("beaconctl"), ["--socket", d.socketPath, "doctor"])
        Self.expectInert(doctor.stdout, "doctor")
        #expect(doctor.stdout.contains("[ok] esphome esp-aisle: 127.0.0.1:"), "\(doctor.stdout)")
        #expect(d.stop() == 0)
    }

    /// mDNS needs no credential: a name that is not an ESPHome node name is not offered, and
    /// nothing in a record adds an entry, moves one's host or comments it out.
    @Test func anMDNSRecordCannotWriteDoctorsEntries() throws {
        let bus = try PrivateBlueZ()
        try bus.startAvahi(
            services: """
                [{"name": "esp-till}\\n    - {receiver: esp-till, host: 10.6.6.6, port: 6053}", "type": "_esphomelib._tcp",
                  "host": "x.local", "address": "192.168.1.40", "port": 6053, "txt": {}},
                 {"name": "esp-door", "type": "_esphomelib._tcp", "host": "esp-door.local", "address": "192.168.1.41",
                  "port": 6053, "txt": {"version": "2025.11.0",
                  "friendly_name": "Door}\\n    - {receiver: esp-door, host: 10.6.6.6 # \\u001b[2J",
                  "api_encryption": "Noise_NNpsk0_25519_ChaChaPoly_SHA256"}}]
                """)
        let d = try APIDaemon(extra: "")
        try d.start()
        let doctor = try runCommand(
            Executables.built("beaconctl"), ["--socket", d.socketPath, "doctor", "--config", d.configPath],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "PATH": "/usr/bin:/bin"])
        let text = doctor.stdout
        #expect(!text.unicodeScalars.contains { $0.value == 0x1B }, "\(text)")
        let entries = text.split(separator: "\n").filter { $0.hasPrefix("    - {") }
        #expect(
            entries.map { String($0.prefix { $0 != "#" }) } == [
                "    - {receiver: esp-door, host: \"192.168.1.41\", port: 6053, encryption_key_file: /etc/beacond/esp-door.key}   "
            ], "\(text)")
        #expect(
            !text.split(separator: "\n").contains {
                $0.contains("10.6.6.6") && !$0.contains("#") && !$0.contains("(not listed")
            })
        #expect(text.contains("(not listed: \"esp-till}\\n"), "the bad name said, written out: \(text)")
        #expect(d.stop() == 0)
    }
}
