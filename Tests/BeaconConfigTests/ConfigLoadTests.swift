import BeaconCore
import Foundation
import Testing

@testable import BeaconConfig

@Suite struct ConfigLoadTests {
    static var repositoryRoot: String {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }

    @Test func aFileWithOnlyGatewayIsValid() throws {
        let config = try ConfigLoader.load(yaml: "gateway:\n", file: "x.yaml", defaultGatewayID: "gw-host")
        #expect(config.gateway.id == "gw-host")
        #expect(config.monitoring == MonitoringSettings())
        #expect(config.clients.isEmpty)
    }

    @Test func anEmptyFileIsValid() throws {
        _ = try ConfigLoader.load(yaml: "", file: "x.yaml")
    }

    @Test func receiversAndAssetsWithoutClientsAreValid() throws {
        let yaml = """
            receivers:
              - id: hci0
                position: {x: 1.5, y: 2, level: 1}
            assets:
              - id: cart-17
                beacon: {address: "aa:bb:cc:dd:ee:ff"}

            """
        let config = try ConfigLoader.load(yaml: yaml, file: "x.yaml")
        #expect(config.receivers == [ReceiverSpec(id: "hci0", x: 1.5, y: 2, level: 1)])
        #expect(config.assets == [AssetSpec(id: "cart-17", name: nil, beacon: .address("AA:BB:CC:DD:EE:FF"))])
    }

    @Test func theSpecsFullExampleLoads() throws {
        let yaml = """
            gateway:
              id: store-042-gw1
              state_dir: /var/lib/beacond
            bluetooth:
              adapters: [hci0]
              scan: active
              min_rssi: -100
            monitoring:
              region_limit: 20
              enter_sightings: 2
              enter_window: 5s
              exit_timeout: 30s
              min_rssi: -95
              hysteresis_db: 5
              ranging_interval: 1s
            clients:
              - id: storefront
                regions:
                  - id: store
                    uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0
                    major: 42
                    minor: 7
                    notify_on_entry: true
                    notify_on_exit: true
                    dwell: [2m, 10m]
                    ranging: false
            receivers:
              - id: hci0
                position: {x: 0.0, y: 0.0, level: 0}
                rssi_at_1m: -59
                path_loss_exponent: 2.0
              - id: hci1
                position: {x: 6.0, y: 0.0, level: 0}
            assets:
              - id: cart-17
                name: Cart 17
                beacon: {uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 9, minor: 17}
            zones:
              - id: checkout
                level: 0
                polygon: [[0, 0], [6, 0], [6, 3], [0, 3]]
              - id: back-door
                receiver: hci1
                within: 2.0
            alarms:
              - id: carts-out
                zones: [back-door]
                on: [enter, exit, dwell]
                dwell: 5m
                assets: [cart-17]
                active: true
            positioning:
              publish_interval: 2s
              max_receivers: 5
              max_speed: 2.5
              min_move: 0.5
            api:
              socket: /run/beacond/api.sock
              admin_group: beacond-admin
            webhooks:
              - id: crm
                url: https://crm.example/hooks/beacons
                events: ["region.*", "zone.*"]
                batch: {max_events: 50, max_delay: 1s}
                timeout: 5s
                max_age: 24h

            """
        let config = try ConfigLoader.load(yaml: yaml, file: "x.yaml")
        #expect(config.gateway.id == "store-042-gw1")
        #expect(config.bluetooth.adapters == ["hci0"])
        #expect(
            config.clients[0].regions[0]
                == RegionSpec(
                    id: "store", uuid: BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 42, minor: 7,
                    dwell: [.minutes(2), .minutes(10)]))
        #expect(config.zones[1].shape == .nearReceiver(receiver: "hci1", within: 2))
        #expect(config.alarms[0].on == [.enter, .exit, .dwell] && config.alarms[0].dwell == .minutes(5))
        #expect(config.webhooks[0].events == ["region.*", "zone.*"] && config.webhooks[0].maxAge == .hours(24))
        #expect(config.engineConfiguration.receivers["hci0"] == ReceiverCalibration(rssiAt1m: -59, pathLossExponent: 2))
    }

    @Test func theShippedExampleLoads() throws {
        let path = Self.repositoryRoot + "/config/example.yaml"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let config = try ConfigLoader.load(yaml: text, file: path)
        #expect(config.clients.map(\.id) == ["storefront", "loyalty"])
        #expect(config.monitoring.regionLimit == 3)
    }

    @Test func theSimulatedSitesLoadWithTheirExtensions() throws {
        for file in ["config/sim-store.yaml", "bench/flat.yaml", "bench/kolakowski.yaml"] {
            let path = Self.repositoryRoot + "/" + file
            let config = try ConfigLoader.load(yaml: try String(contentsOfFile: path, encoding: .utf8), file: path)
            #expect(!config.receivers.isEmpty && !config.assets.isEmpty, "\(file)")
        }
        let store = try ConfigLoader.load(
            yaml: try String(contentsOfFile: Self.repositoryRoot + "/config/sim-store.yaml", encoding: .utf8), file: "s"
        )
        #expect(store.receivers.count == 6 && store.assets.count == 23 && store.zones.count == 4)
        #expect(store.positioning.tagHeight == 1.2 && store.positioning.floor?.count == 4)
        #expect(store.receivers[0].z == 3.0 && store.simulation?.sigmaDB == 4 && store.simulation?.packetLoss == 0.2)
        #expect(store.simulation?.pause == .seconds(5) ... .seconds(60))
        #expect(store.simulation?.tags.map(\.asset) == ["tag-21", "tag-22", "tag-23"])
        #expect(store.simulation?.tags.first?.interval == .seconds(10) && store.simulation?.tags[1].telemetry == .tlm)
        let kolakowski = try ConfigLoader.load(
            yaml: try String(contentsOfFile: Self.repositoryRoot + "/bench/kolakowski.yaml", encoding: .utf8), file: "k"
        )
        #expect(kolakowski.receivers[0].rssiAt1m == -52.1, "fractional calibration")
    }
}
