import Foundation
import TestSupport
import Testing

/// Issue 5's receivers: several local adapters (through bluetoothd) and a remote receiver
/// (a relay posting to `POST /v1/sightings`) hear the same tag, and one engine places it
/// from all three.
@Suite(.serialized) struct ReceiversTogetherTests {
    static let tag = "D0:5E:00:00:00:2A"

    @Test func twoAdaptersAndARelayPlaceOneAsset() throws {
        let bus = try PrivateBlueZ()
        try bus.startBlueZ()
        try bus.drive("add-adapter", "hci0")
        try bus.drive("add-adapter", "hci1")
        let dir = try Executables.temporaryDirectory()
        let socket = dir.appendingPathComponent("api.sock").path
        let config = dir.appendingPathComponent("beacond.yaml").path
        try """
        gateway: {id: together, state_dir: \(dir.appendingPathComponent("state").path)}
        api: {socket: \(socket)}
        receivers:
          - {id: hci0, position: {x: 0, y: 0}, rssi_at_1m: -59}
          - {id: hci1, position: {x: 10, y: 0}, rssi_at_1m: -59}
          - {id: relay-1, position: {x: 5, y: 8}, rssi_at_1m: -59}
        assets:
          - {id: cart, beacon: {address: "\(Self.tag)"}}
        positioning: {publish_interval: 1s, min_move: 0}

        """.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try RunningDaemon(arguments: ["--config", config], environment: bus.environment)
        try daemon.waitUntil("discovery on both adapters") { events, _ in
            ["hci0", "hci1"].allSatisfy { adapter in
                events.contains {
                    $0.contains("beacond.adapter.state") && $0.contains("\"adapter\":\"\(adapter)\"")
                        && $0.contains("\"discovering\":true")
                }
            }
        }
        let client = UnixHTTPClient(socketPath: socket)
        let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
        // The cart at (5, 2.5): 5.6 m from hci0 and hci1 (-74 dBm), 5.5 m from the relay
        // (-74 dBm). Heard until its position settles there (max_speed moves it from where
        // the first receiver to hear it put it), 30 rounds at most.
        func hear() throws {
            try bus.drive("ibeacon", "hci0", Self.tag, uuid, "1", "1", "-74", "3", "0.05")
            try bus.drive("ibeacon", "hci1", Self.tag, uuid, "1", "1", "-74", "3", "0.05")
            let t = String(format: "%.3f", Date().timeIntervalSince1970)
            let line =
                "{\"t\":\(t),\"receiver\":\"relay-1\",\"address\":\"\(Self.tag)\",\"rssi\":-74,"
                + "\"manufacturer_data\":{\"76\":\"0215e2c56db5dffb48d2b060d0f5a71096e000010001c5\"}}"
            let posted = try client.request("POST", "/v1/sightings", body: line)
            #expect(posted.status == 202, "\(posted.body)")
        }
        var position: [String: Any] = [:]
        for _ in 0..<30 {
            try hear()
            position = try client.request("GET", "/v1/assets/cart").object["position"] as? [String: Any] ?? [:]
            let x = position["x"] as? Double ?? -100
            let y = position["y"] as? Double ?? -100
            if abs(x - 5) < 1 && abs(y - 2.5) < 1.5 { break }
        }
        #expect(Set(position["receivers_used"] as? [String] ?? []) == ["hci0", "hci1", "relay-1"], "\(position)")
        let x = position["x"] as? Double ?? -100
        let y = position["y"] as? Double ?? -100
        #expect(abs(x - 5) < 1 && abs(y - 2.5) < 1.5, "placed from all three: \(position)")
        #expect(daemon.stop() == 0)
    }
}
