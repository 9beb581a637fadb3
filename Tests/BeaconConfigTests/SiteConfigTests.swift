import BeaconCore
import Testing

@testable import BeaconConfig

/// SPEC §6.1: `site:` and the receivers' `gateway`/`adapter`.
@Suite struct SiteConfigTests {
    func errors(_ yaml: String) -> [String] {
        do {
            _ = try ConfigLoader.load(
                yaml: yaml, file: "site.yaml", fileReadable: { $0 == "/missing" ? "no such file" : nil })
            return []
        } catch {
            return error.errors.map(\.description)
        }
    }

    @Test func theSpecsSiteExampleLoads() throws {
        let yaml = """
            gateway: {id: gw2}
            site:
              id: store-042
              mqtt:
                url: mqtts://broker.store.lan:8884
                username: gw2
                password_file: /etc/beacond/mqtt.secret
                ca_file: /etc/ssl/certs/ca-certificates.crt
                keepalive: 15s
                events: ["zone.*", region.enter]
                max_age: 2h
              locator: false
              locator_priority: 50
              home_assistant: {discovery_prefix: ha}
            receivers:
              - {id: rx-front-left, gateway: gw1, adapter: hci0, position: {x: 0, y: 0}}
              - {id: rx-back, gateway: gw2, adapter: hci1, position: {x: 9, y: 0}}
              - {id: hci0, position: {x: 5, y: 5}}

            """
        let config = try ConfigLoader.load(yaml: yaml, file: "site.yaml")
        let site = try #require(config.site)
        #expect(site.id == "store-042")
        #expect(SiteTopics(site: site.id).prefix == "beacond/store-042/")
        #expect(site.mqtt.host == "broker.store.lan" && site.mqtt.port == 8884 && site.mqtt.tls)
        #expect(site.mqtt.username == "gw2" && site.mqtt.passwordFile == "/etc/beacond/mqtt.secret")
        #expect(site.mqtt.keepalive == .seconds(15))
        #expect(site.mqtt.events == ["zone.*", "region.enter"] && site.mqtt.maxAge == .hours(2))
        #expect(!site.locator && site.locatorPriority == 50 && site.homeAssistantPrefix == "ha")
        #expect(config.receivers.map(\.gateway) == ["gw1", "gw2", nil])
        #expect(config.receivers.map(\.adapter) == ["hci0", "hci1", nil])
        #expect(config.receivers.filter { $0.belongs(to: "gw2") }.map(\.id) == ["rx-back", "hci0"])
    }

    @Test func defaults() throws {
        let config = try ConfigLoader.load(
            yaml: "site:\n  mqtt: {url: \"mqtt://10.0.0.5\"}\n", file: "site.yaml", defaultGatewayID: "gw-host")
        let site = try #require(config.site)
        #expect(site.id == "gw-host" && site.mqtt.port == 1883 && !site.mqtt.tls && site.locator)
        #expect(site.locatorPriority == 100 && site.homeAssistantPrefix == nil && site.mqtt.keepalive == .seconds(5))
        #expect(site.mqtt.events == ["*"] && site.mqtt.maxAge == .hours(24))
        #expect(try ConfigLoader.load(yaml: "gateway: {id: a}\n", file: "x").site == nil)
    }

    @Test func brokerURLs() throws {
        #expect(try MQTTBroker.parse("mqtt://[::1]:1884").get().host == "::1")
        #expect(try MQTTBroker.parse("mqtts://b").get().port == 8883)
        #expect(
            errors("site:\n  mqtt: {url: \"http://b:1883\"}\n") == [
                #"site.yaml:2:15: site.mqtt.url: expected mqtt://host:port or mqtts://host:port, got "http://b:1883""#
            ])
        #expect(
            errors("site:\n  mqtt: {url: \"mqtt://b:0\"}\n") == [
                #"site.yaml:2:15: site.mqtt.url: expected a port 1...65535 after ":" in "mqtt://b:0""#
            ])
        #expect(
            errors("site:\n  mqtt: {url: \"mqtt://u:p@b\"}\n").first?.contains("user and password have keys") == true)
    }

    @Test func mistakesNameTheKey() {
        #expect(errors("site:\n  locator: true\n") == [#"site.yaml:2:3: site: missing key "mqtt""#])
        #expect(
            errors("site:\n  mqtt: {url: \"mqtt://b\", ca_file: /etc/ca.pem}\n") == [
                #"site.yaml:2:36: site.mqtt.ca_file: a CA file is for mqtts:// only; the url is "mqtt://b""#
            ])
        #expect(
            errors("site:\n  mqtt: {url: \"mqtt://b\", username: u, password_file: /missing}\n") == [
                #"site.yaml:2:55: site.mqtt.password_file: cannot use "/missing": no such file"#
            ])
        #expect(
            errors("site:\n  mqtt: {url: \"mqtt://b\", password_file: /p}\n") == [
                #"site.yaml:2:42: site.mqtt.password_file: a password needs a username (site.mqtt.username)"#
            ])
        #expect(
            errors("site:\n  mqtt: {url: \"mqtt://b\"}\n  home_assistant: {discovery_prefix: \"a/b\"}\n") == [
                #"site.yaml:3:38: site.home_assistant.discovery_prefix: expected a topic level without '/', '+', '#' or spaces, got "a/b""#
            ])
        #expect(
            errors("site:\n  mqtt: {url: \"mqtt://b\", max_age: 0s}\n").first?.contains("site.mqtt.max_age") == true)
        #expect(
            errors("site:\n  mqtt: {url: \"mqtt://b\"}\n  locator_prio: 5\n").first?.contains("did you mean") == true)
    }

    @Test func oneAdapterOfOneGatewayCannotBeTwoReceivers() {
        let yaml = """
            receivers:
              - {id: a, gateway: gw1, adapter: hci0, position: {x: 0, y: 0}}
              - {id: b, gateway: gw1, adapter: hci0, position: {x: 1, y: 0}}
              - {id: c, gateway: gw2, adapter: hci0, position: {x: 2, y: 0}}

            """
        #expect(
            errors(yaml) == [
                #"site.yaml:2:3: receivers: receivers "a" and "b" are both adapter "hci0" of gateway "gw1""#
            ])
    }
}

/// What this gateway's adapters are called in its site (SPEC §6.1).
@Suite struct LocalReceiversTests {
    static let yaml = """
        receivers:
          - {id: rx-front, gateway: gw1, adapter: hci0, position: {x: 0, y: 0}}
          - {id: rx-back, gateway: gw2, adapter: hci0, position: {x: 9, y: 0}}
          - {id: hci1, position: {x: 5, y: 5}}

        """

    @Test func inASiteAdaptersTakeTheirReceiversNamesAndOthersTheGatewaysPrefix() throws {
        let config = try ConfigLoader.load(
            yaml: "gateway: {id: gw1}\nsite: {mqtt: {url: \"mqtt://b\"}}\n" + Self.yaml, file: "x")
        let names = LocalReceivers(config: config)
        #expect(names.receiver(adapter: "hci0") == "rx-front")
        #expect(names.receiver(adapter: "hci1") == "hci1")
        #expect(names.receiver(adapter: "hci2") == "gw1.hci2")
        #expect(LocalReceivers.simulated(config) == ["rx-front", "hci1"])
    }

    @Test func aGatewayAloneKeepsItsAdaptersNames() throws {
        let config = try ConfigLoader.load(yaml: "gateway: {id: gw1}\n", file: "x")
        let names = LocalReceivers(config: config)
        #expect(names.receiver(adapter: "hci0") == "hci0")
    }
}

@Suite struct SiteReloadConfigTests {
    @Test func aChangedSiteWaitsForARestart() throws {
        let old = try ConfigLoader.load(yaml: "site: {mqtt: {url: \"mqtt://a\"}}\n", file: "x")
        let new = try ConfigLoader.load(yaml: "site: {mqtt: {url: \"mqtt://b\"}}\n", file: "x")
        let reload = ConfigReload(from: old, to: new)
        #expect(reload.needsRestart == ["site"])
        #expect(reload.running.site?.mqtt.host == "a")
    }
}
