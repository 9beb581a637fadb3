import BeaconCore
import Foundation
import TestSupport
import Testing

/// `beaconctl enroll` (SPEC §9) on a BlueZ store laid out as bluetoothd 5.66 writes it: the
/// entry it prints, pasted into the configuration, follows the phone across its addresses.
@Suite(.serialized) struct EnrollTests {
    static let adapter = "00:1A:7D:DA:71:13"
    static let phone = "4C:11:22:33:44:55"

    /// `<store>/<adapter>/settings`, `cache/`, and `<device>/info` and `attributes` for a phone
    /// paired over LE; its key stored as the kernel hands it over (least significant byte
    /// first): the Core specification's sample key ec0234a3…7d9b.
    static func store(irk: Bool = true, name: String = "Anna's iPhone") throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("bluez-\(UUID().uuidString)")
        let adapterDir = root.appendingPathComponent(adapter)
        let device = adapterDir.appendingPathComponent(phone)
        try FileManager.default.createDirectory(at: device, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            at: adapterDir.appendingPathComponent("cache"), withIntermediateDirectories: true)
        try
            "[General]\nDiscoverable=false\nAlias=gateway-1\n\n[DeviceID]\nSource=1\nVendor=1246\nProduct=57362\nVersion=1350\n"
            .write(to: adapterDir.appendingPathComponent("settings"), atomically: true, encoding: .utf8)
        var info = """
            [General]
            Name=\(name)
            AddressType=public
            SupportedTechnologies=LE;
            Trusted=true
            Blocked=false
            WakeAllowed=true
            Services=00001800-0000-1000-8000-00805f9b34fb;00001801-0000-1000-8000-00805f9b34fb;0000180a-0000-1000-8000-00805f9b34fb;

            """
        if irk { info += "[IdentityResolvingKey]\nKey=9B7D390AA610103405ADC857A33402EC\n\n" }
        info += """
            [PeripheralLongTermKey]
            Key=5A4C8C2A7E3B1D0F9E8D7C6B5A493827
            Authenticated=0
            EncSize=16
            EDiv=0
            Rand=0

            """
        try info.write(to: device.appendingPathComponent("info"), atomically: true, encoding: .utf8)
        try "[0x0001]\nUUID=00002800-0000-1000-8000-00805f9b34fb\nValue=1800\n"
            .write(to: device.appendingPathComponent("attributes"), atomically: true, encoding: .utf8)
        return root
    }

    static func enroll(_ store: URL, _ address: String) throws -> CommandOutput {
        try runCommand(Executables.built("beaconctl"), ["enroll", "--store", store.path, address])
    }

    /// Issue 51, item 15: a device's name with control characters (an escape, a tab, a C1
    /// control, a quote) made an entry beacond refused. What enroll prints — the comment and
    /// the entry — is read back by beacond with the name whole.
    @Test func aNameWithControlCharactersPrintsAnEntryBeacondReads() throws {
        // As bluetoothd stores it (GLib's key file: the tab and the backslash escaped).
        let name = "Anna\u{1B}[31m \"red\"\tphone\u{85}\\x"
        let stored = "Anna\u{1B}[31m \"red\"\\tphone\u{85}\\\\x"
        let out = try Self.enroll(try Self.store(name: stored), Self.phone)
        #expect(out.status == 0, "\(out.stderr)")
        let lines = out.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 3 && lines[0].hasPrefix("# \"Anna\\u001B[31m"), "\(out.stdout)")
        let dir = try Executables.temporaryDirectory()
        let file = dir.appendingPathComponent("beacond.yaml")
        try ("assets:\n" + out.stdout).write(to: file, atomically: true, encoding: .utf8)
        let check = try runCommand(Executables.built("beacond"), ["--check-config", "--config", file.path])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        let d = try APIDaemon(extra: "assets:\n" + out.stdout)
        try d.start()
        let assets = try d.client.request("GET", "/v1/assets").object["assets"] as? [[String: Any]] ?? []
        #expect(assets.first?["name"] as? String == name, "\(assets)")
        #expect(d.stop() == 0)
    }

    @Test func thePrintedEntryFollowsThePhoneAcrossItsAddresses() throws {
        let store = try Self.store()
        let out = try Self.enroll(store, "4c:11:22:33:44:55")
        #expect(out.status == 0, "\(out.stderr)")
        let entry = try #require(out.stdout.split(separator: "\n").first { $0.contains("beacon: {irk:") })
        #expect(
            entry == #"  - {id: annas-iphone, name: "Anna's iPhone", beacon: {irk: ec0234a357c8ad05341010a60a397d9b}}"#)

        // Pasted under assets: the phone, sending from two private addresses of its key.
        let config = AssetAPITests.site.replacingOccurrences(
            of: "assets:\n",
            with: "assets:\n" + entry.dropFirst(2).description.replacingOccurrences(of: "- {", with: "  - {") + "\n")
        let d = try APIDaemon(extra: config)
        try d.start()
        let key = try #require(IdentityResolvingKey(hex: "ec0234a357c8ad05341010a60a397d9b"))
        for address in ["70:81:94:0D:FB:AA", try #require(key.address(prand: 0x2A_0F0F))] {
            try eventually("the phone placed from \(address)", timeout: 10, every: 0.2) {
                let lines = AssetAPITests.sightings(at: (2, 5)).map {
                    $0.replacingOccurrences(
                        of: "\"address\":\"d0:00:00:00:00:09\"",
                        with: "\"address\":\"\(address)\",\"address_type\":\"random\"")
                }
                try d.post(lines)
                let asset = try d.client.request("GET", "/v1/assets/annas-iphone").object
                let used = (asset["position"] as? [String: Any])?["receivers_used"] as? [String] ?? []
                return Set(used) == ["r1", "r2", "r3", "r4"]
            }
        }
        let asset = try d.client.request("GET", "/v1/assets/annas-iphone").object
        #expect((asset["beacon"] as? [String: Any])?["irk"] as? String == "set", "the key itself is never shown")
        #expect(d.stop() == 0)
    }

    @Test func aDeviceNotPairedOrWithoutAKeyIsToldWhatToDo() throws {
        let store = try Self.store(irk: false)
        let noKey = try Self.enroll(store, Self.phone)
        #expect(noKey.status == 1 && noKey.stderr.contains("gave no identity resolving key"), "\(noKey.stderr)")
        let unpaired = try Self.enroll(store, "4C:11:22:33:44:66")
        #expect(unpaired.status == 1, "\(unpaired.stderr)")
        #expect(
            unpaired.stderr.contains("is not paired with this gateway")
                && unpaired.stderr.contains("pair 4C:11:22:33:44:66"))
        let bad = try Self.enroll(store, "phone")
        #expect(bad.status != 0 && bad.stderr.contains("expected an address"), "\(bad.stderr)")
    }
}
