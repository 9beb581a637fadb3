import BeaconCore
import Testing

@testable import BeaconConfig

/// SPEC §9: `esphome:` maps ESPHome Bluetooth proxies to receivers of `receivers[]`.
@Suite struct ESPHomeConfigTests {
    static let receivers = """
        gateway: {id: gw1}
        receivers:
          - {id: rx-hall, position: {x: 0, y: 0}}
          - {id: esp-aisle, position: {x: 10, y: 0}}
          - {id: esp-till, position: {x: 0, y: 10}}

        """
    static let key = "px7tsbK3C7bpXHr2OevEV2ZMg/FXNTw2mNOmi4HlrOA="

    func errors(_ yaml: String, secrets: [String: String] = [:]) -> [String] {
        do {
            _ = try ConfigLoader.load(
                yaml: Self.receivers + yaml, file: "beacond.yaml", secretText: { secrets[$0] })
            return []
        } catch {
            return error.errors.map(\.description)
        }
    }

    @Test func proxiesMapToReceiversThatAreNoAdapters() throws {
        let config = try ConfigLoader.load(
            yaml: Self.receivers + """
                esphome:
                  - {receiver: esp-aisle, host: 192.168.1.40, encryption_key_file: /etc/beacond/esp-aisle.key}
                  - {receiver: esp-till, host: esp-till.local, port: 6054, encryption_key: "\(Self.key)"}

                """, file: "beacond.yaml")
        #expect(config.esphome.count == 2)
        #expect(config.esphome[0].host == "192.168.1.40" && config.esphome[0].port == 6053)
        #expect(config.esphome[0].encryptionKeyFile == "/etc/beacond/esp-aisle.key")
        #expect(config.esphome[1].port == 6054 && config.esphome[1].encryptionKey == Self.key)
        #expect(config.ownReceivers.map(\.id) == ["rx-hall"], "a proxy's receiver is no adapter of this gateway")
        #expect(config.ownESPHomeProxies.map(\.receiver) == ["esp-aisle", "esp-till"])
        #expect(try ESPHomeProxySpec.key(" \(Self.key)\n").get().count == 32)
    }

    @Test func mistakesAreLocatedAndNamed() {
        #expect(
            errors("esphome:\n  - {receiver: esp-nowhere, host: a}\n") == [
                "beacond.yaml:7:16: esphome[0].receiver: no receiver \"esp-nowhere\" in receivers: it gives the proxy's position"
            ])
        #expect(
            errors("esphome:\n  - {receiver: esp-aisle, host: \"http://10.0.0.4\"}\n") == [
                "beacond.yaml:7:33: esphome[0].host: a host, not a URL: write \"10.0.0.4\""
            ])
        #expect(
            errors("esphome:\n  - {receiver: esp-aisle, host: \"10.0.0.4:6053\"}\n") == [
                "beacond.yaml:7:33: esphome[0].host: the port goes in port:, not in host"
            ])
        #expect(
            errors("esphome:\n  - {receiver: esp-aisle, host: a, encryption_key: c2hvcnQ=}\n") == [
                "beacond.yaml:7:52: esphome[0].encryption_key: not an ESPHome API key: 5 bytes, ESPHome's keys are 32"
            ])
        #expect(
            errors(
                "esphome:\n  - {receiver: esp-aisle, host: a, encryption_key_file: /k}\n", secrets: ["/k": "not a key!"]
            )
                == [
                    "beacond.yaml:7:57: esphome[0].encryption_key_file: /k does not hold an ESPHome API key: not base64 (ESPHome's api: encryption: key: is 44 characters)"
                ])
        #expect(
            errors("esphome:\n  - {receiver: esp-aisle, host: a, encryption_key: \"\(Self.key)\", password: p}\n") == [
                "beacond.yaml:7:110: esphome[0].password: give one of encryption_key_file, encryption_key and password"
            ])
        #expect(
            errors("esphome:\n  - {receiver: esp-aisle, host: a}\n  - {receiver: esp-aisle, host: b}\n") == [
                "beacond.yaml:8:16: esphome[1].receiver: receiver \"esp-aisle\" is esphome[0]'s already"
            ])
        #expect(
            errors("esphome:\n  - {receiver: esp-aisle, host: a, port: 0}\n")
                == ["beacond.yaml:7:42: esphome[0].port: must be between 1 and 65535, got 0"])
    }

    /// In a site every gateway reads the same file: the gateway a proxy's receiver names is
    /// the one that connects, so that one connection hears it.
    @Test func inASiteTheReceiverNamesTheGatewayThatConnects() throws {
        let site = """
            gateway: {id: gw1}
            site: {mqtt: {url: "mqtt://127.0.0.1:1883"}, gateways: [gw2]}
            receivers:
              - {id: esp-aisle, gateway: gw2, position: {x: 10, y: 0}}
              - {id: esp-till, position: {x: 0, y: 10}}
            esphome:
              - {receiver: esp-aisle, host: a}

            """
        let config = try ConfigLoader.load(yaml: site, file: "beacond.yaml")
        #expect(config.ownESPHomeProxies.isEmpty, "gw2 connects to it, not gw1")
        var other = config
        other.gateway.id = "gw2"
        #expect(other.ownESPHomeProxies.map(\.receiver) == ["esp-aisle"])
        #expect(throws: ConfigErrors.self) {
            try ConfigLoader.load(yaml: site + "  - {receiver: esp-till, host: b}\n", file: "beacond.yaml")
        }
    }
}
