import BeaconConfig
import BeaconCore

/// A site with something for every kind of sighting to reach: regions of each beacon
/// format with dwell and ranging, positioned receivers, assets by address and by iBeacon,
/// a polygon zone, a receiver zone and alarms on both.
enum FuzzSite {
    static let yaml = """
        gateway: {id: fuzz}
        monitoring: {exit_timeout: 10s, enter_sightings: 2, enter_window: 5s, ranging_interval: 1s}
        clients:
          - id: app
            regions:
              - {id: store, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, dwell: [5s], ranging: true}
              - {id: till, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 1, minor: 2}
        receivers:
          - {id: hci0, position: {x: 0, y: 0, z: 2.5}, rssi_at_1m: -59}
          - {id: rx1, position: {x: 10, y: 0}, path_loss_exponent: 2.5}
          - {id: rx2, position: {x: 10, y: 8, level: 1}}
          - {id: rx3, position: {x: 0, y: 8}}
        assets:
          - {id: cart, beacon: {address: "C3:11:22:33:44:55"}}
          - {id: badge, beacon: {uuid: F7826DA6-4FA2-4E98-8024-BC5B71E0893E, major: 7}}
        zones:
          - {id: aisle, polygon: [[1, 1], [6, 1], [6, 3], [3, 3], [3, 6], [1, 6]]}
          - {id: door, receiver: rx1, within: 2}
        alarms:
          - {id: traffic, zones: [aisle, door], on: [enter, exit, dwell], dwell: 3s}
        positioning: {publish_interval: 1s, tag_height: 1.2, floor: [[0, 0], [10, 0], [10, 8], [0, 8]]}
        """

    static let config: Config = {
        do {
            return try ConfigLoader.load(yaml: yaml, file: "fuzz-site.yaml")
        } catch {
            fatalError("the fuzz site does not load: \(error)")
        }
    }()

    static let start = Timestamp.seconds(1_763_805_600)
    /// The site's engine, started once; each input gets its own copy.
    static let engine = BeaconEngine(configuration: config.engineConfiguration, start: start)

    /// Twenty minutes of the site's beacons heard by every receiver, for configurations the
    /// fuzzer makes up: past exit_timeout, dwell and ranging intervals as they are written.
    static let day: String = {
        let ibeacon = "0215e2c56db5dffb48d2b060d0f5a71096e000010002c5"
        let badge = "0215f7826da64fa24e988024bc5b71e0893e00070001c5"
        var lines: [String] = []
        for second in stride(from: 0, to: 1200, by: 7) {
            let t = start.unixSeconds + Double(second)
            for (i, receiver) in ["hci0", "rx1", "rx2", "rx3"].enumerated() {
                let rssi = -50 - (second / 7 + i * 13) % 45
                lines.append(
                    #"{"t":\#(t + Double(i) / 10),"receiver":"\#(receiver)","address":"C3:11:22:33:44:55","rssi":\#(rssi),"manufacturer_data":{"76":"\#(second % 400 < 200 ? ibeacon : badge)"}}"#
                )
            }
        }
        return lines.joined(separator: "\n")
    }()

    /// `day` as sightings.
    static let daySightings: [Sighting] = day.split(separator: "\n").compactMap {
        try? SightingRecord.parse(line: String($0))
    }
}
