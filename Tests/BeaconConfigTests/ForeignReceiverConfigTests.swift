import BeaconCore
import Testing

@testable import BeaconConfig

/// SPEC §9: `site.espresense` and `site.openmqttgateway` map other systems' rooms and gateway
/// names to receivers; those receivers are no gateway's adapters.
@Suite struct ForeignReceiverConfigTests {
    static let receivers = """
        gateway: {id: gw1}
        receivers:
          - {id: rx-hall, position: {x: 0, y: 0}}
          - {id: rx-kitchen, position: {x: 10, y: 0}}
          - {id: rx-lobby, position: {x: 0, y: 10}}
          - {id: rx-gw2, gateway: gw2, position: {x: 10, y: 10}}

        """

    func errors(_ yaml: String) -> [String] {
        do {
            _ = try ConfigLoader.load(yaml: Self.receivers + yaml, file: "beacond.yaml")
            return []
        } catch {
            return error.errors.map(\.description)
        }
    }

    @Test func roomsAndGatewaysMapToReceiversThatAreNoAdapters() throws {
        let config = try ConfigLoader.load(
            yaml: Self.receivers + """
                site:
                  mqtt: {url: "mqtt://127.0.0.1:1883"}
                  espresense: {rooms: {kitchen: rx-kitchen}}
                  openmqttgateway: {prefix: theengs/home, gateways: {OMG_lobby: rx-lobby}}

                """, file: "beacond.yaml")
        let foreign = try #require(config.site?.foreign)
        #expect(foreign.espresense == .init(prefix: "espresense", receivers: ["kitchen": "rx-kitchen"]))
        #expect(foreign.openMQTTGateway == .init(prefix: "theengs/home", receivers: ["OMG_lobby": "rx-lobby"]))
        #expect(foreign.filters == ["espresense/devices/+/+", "theengs/home/+/BTtoMQTT/+"])
        // This gateway's own adapters: not the foreign ones, not gw2's.
        #expect(config.ownReceivers.map(\.id) == ["rx-hall"])
        #expect(LocalReceivers.simulated(config) == ["rx-hall"])
    }

    @Test func mistakesAreLocatedAndNamed() {
        let site = "site:\n  mqtt: {url: \"mqtt://127.0.0.1:1883\"}\n"
        #expect(
            errors(site + "  espresense: {rooms: {kitchen: rx-nowhere}}\n") == [
                "beacond.yaml:9:33: site.espresense.rooms.kitchen: no receiver \"rx-nowhere\" in receivers: it gives the room's position"
            ])
        #expect(
            errors(site + "  openmqttgateway: {gateways: {OMG_1: rx-gw2}}\n") == [
                "beacond.yaml:9:39: site.openmqttgateway.gateways.OMG_1: receiver \"rx-gw2\" names a gateway; one fed by another system's messages is no gateway's adapter"
            ])
        #expect(
            errors(site + "  espresense: {prefix: \"a/+\", rooms: {kitchen: rx-kitchen}}\n") == [
                "beacond.yaml:9:24: site.espresense.prefix: expected topic levels without '+', '#', spaces or empty levels, got \"a/+\""
            ])
        #expect(
            errors(site + "  espresense: {prefix: espresense}\n") == [
                "beacond.yaml:9:15: site.espresense: missing key \"rooms\""
            ])
    }
}
