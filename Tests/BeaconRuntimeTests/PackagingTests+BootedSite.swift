import Foundation
import TestSupport
import Testing

/// A site on the booted Debian (issue 44): Debian's mosquitto locked down with the shipped
/// `config/mosquitto/beacond-site.conf` and `.acl`, the package's unit as gateway gw1 and a
/// second unit made from it as gw2, as an operator runs two gateways' daemons on one machine.
/// The locator is stopped with `systemctl stop`; every alert reaches the webhook once, from
/// the gateway that was the locator when it happened.
extension PackagingTests {
    /// gw1 (locator priority 100) or gw2 (50): one client with two regions, its events to
    /// `receiver`, the site on the container's broker as the ACL's user of the gateway's name.
    static func siteConfig(gateway: String, priority: Int, port: Int, receiver: WebhookReceiver) -> String {
        let run = gateway == "gw1" ? "beacond" : "beacond-\(gateway)"
        return """
            gateway:
              id: \(gateway)
              state_dir: /var/lib/\(run)
            api:
              socket: /run/\(run)/api.sock
              admin_group: beacond-admin
            site:
              id: booted-store
              mqtt: {url: "mqtt://127.0.0.1:\(port)", username: \(gateway), password_file: /etc/beacond/\(gateway).password}
              locator_priority: \(priority)
              gateways: [gw1, gw2]
            monitoring:
              enter_sightings: 1
            clients:
              - id: app
                regions:
                  - {id: door, uuid: \(APIDaemon.uuid), major: 1}
                  - {id: till, uuid: \(APIDaemon.uuid), major: 2}
            webhooks:
              - {id: crm, url: "\(receiver.url)", events: ["region.*"], batch: {max_events: 1, max_delay: 0s}}

            """
    }

    /// `GET /v1/status` of the daemon on `socket`, inside the container.
    static func status(_ gateway: BootedDebian, socket: String) throws -> [String: Any] {
        let answer = try gateway.run("curl -sS --unix-socket \(socket) http://localhost/v1/status")
        return (try? JSONSerialization.jsonObject(with: Data(answer.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    static func locator(_ gateway: BootedDebian, socket: String) throws -> String? {
        let site = try status(gateway, socket: socket)["site"] as? [String: Any]
        guard let locator = site?["locator"] as? [String: Any], locator["this_gateway"] as? Bool == true else {
            return nil
        }
        return locator["gateway"] as? String
    }

    /// One sighting of the region's beacon, posted to the daemon on `socket`.
    static func hear(major: Int, on gateway: BootedDebian, socket: String) throws {
        let line = APIDaemon.sighting(major: major)
        let posted = try gateway.run(
            "printf '%s\\n' '\(line)' | curl -sS --unix-socket \(socket) --data-binary @- http://localhost/v1/sightings"
        )
        #expect(posted.stdout.contains("\"accepted\":1"), "\(posted.stdout)\(posted.stderr)")
    }

    @Test(.enabled(if: booted, "boots a container: needs root and systemd-nspawn (scripts/deps)"))
    func aSiteHandsOverOnRealUnits() throws {
        let gateway = try bootWithPackage()
        defer { gateway.shutDown() }
        let port = try freeLoopbackPort()
        let receiver = try WebhookReceiver()

        // The broker: Debian's mosquitto with the shipped files, a user per gateway
        let root = Executables.packageRoot.appendingPathComponent("config/mosquitto")
        let conf = try String(contentsOf: root.appendingPathComponent("beacond-site.conf"), encoding: .utf8)
        #expect(conf.contains("\nlistener 1883\n"))
        // The container shares the host's network: another port than the host's tests might use
        try gateway.write(
            conf.replacingOccurrences(of: "\nlistener 1883\n", with: "\nlistener \(port) 127.0.0.1\n"),
            to: "/etc/mosquitto/conf.d/beacond-site.conf")
        try gateway.write(
            try String(contentsOf: root.appendingPathComponent("beacond-site.acl"), encoding: .utf8),
            to: "/etc/mosquitto/beacond-site.acl")
        let users = try gateway.run(
            """
            set -e
            mosquitto_passwd -c -b /etc/mosquitto/beacond.passwd gw1 secret-1
            mosquitto_passwd -b /etc/mosquitto/beacond.passwd gw2 secret-2
            chown mosquitto /etc/mosquitto/beacond.passwd
            printf secret-1 > /etc/beacond/gw1.password
            printf secret-2 > /etc/beacond/gw2.password
            chgrp beacond /etc/beacond/gw1.password /etc/beacond/gw2.password
            chmod 0640 /etc/beacond/gw1.password /etc/beacond/gw2.password
            systemctl enable --now mosquitto.service
            """)
        #expect(users.status == 0, "\(users.stdout)\(users.stderr)")

        // gw1 is the package's unit; gw2 a copy with its own file, state and socket
        let first = "/run/beacond/api.sock"
        let second = "/run/beacond-gw2/api.sock"
        try gateway.write(
            Self.siteConfig(gateway: "gw1", priority: 100, port: port, receiver: receiver),
            to: "/etc/beacond/beacond.yaml")
        try gateway.write(
            Self.siteConfig(gateway: "gw2", priority: 50, port: port, receiver: receiver), to: "/etc/beacond/gw2.yaml")
        let units = try gateway.run(
            """
            set -e
            sed -e 's|/etc/beacond/beacond.yaml|/etc/beacond/gw2.yaml|g' \
                -e 's|^StateDirectory=beacond$|StateDirectory=beacond-gw2|' \
                -e 's|^RuntimeDirectory=beacond$|RuntimeDirectory=beacond-gw2|' \
                /lib/systemd/system/beacond.service > /etc/systemd/system/beacond-gw2.service
            chgrp beacond /etc/beacond/gw2.yaml
            chmod 0640 /etc/beacond/gw2.yaml
            systemctl daemon-reload
            systemctl restart beacond.service
            systemctl start beacond-gw2.service
            """)
        let started = try Self.journal(gateway)
        #expect(units.status == 0, "\(units.stdout)\(units.stderr)\n\(started.suffix(3000))")
        try gateway.waitUntil("gw1 to be the locator", seconds: 30) {
            try Self.locator(gateway, socket: first) == "gw1"
        }

        // The door, heard by both: gw1 delivers it, gw2 pairs its own copy with gw1's decision
        try Self.hear(major: 1, on: gateway, socket: first)
        try Self.hear(major: 1, on: gateway, socket: second)
        try receiver.waitUntil("the door's event") { _ in
            receiver.delivered.contains { ($0["subject"] as? String) == "app/door" }
        }

        // The locator stops; gw2 takes over, and hears the till alone
        #expect(try gateway.run("systemctl stop beacond.service").status == 0)
        try gateway.waitUntil("gw2 to take over", seconds: 30) {
            try Self.locator(gateway, socket: second) == "gw2"
        }
        try Self.hear(major: 2, on: gateway, socket: second)
        try receiver.waitUntil("the till's event") { _ in
            receiver.delivered.contains { ($0["subject"] as? String) == "app/till" }
        }
        // gw2 held its own copy of the door: once its outbox is empty, that copy has gone out
        // or been dropped by gw1's decision. It sent the till only.
        var crm: [String: Any] = [:]
        try gateway.waitUntil("gw2's outbox to empty") {
            let outbox = try gateway.run("curl -sS --unix-socket \(second) http://localhost/v1/outbox").stdout
            let webhooks = (try? JSONSerialization.jsonObject(with: Data(outbox.utf8)) as? [String: Any])?["webhooks"]
            crm = (webhooks as? [[String: Any]])?.first { $0["id"] as? String == "crm" } ?? [:]
            return crm["pending"] as? Int == 0
        }
        #expect(crm["delivered"] as? Int == 1, "\(crm)")

        let events = receiver.delivered
        let said = events.map { "\($0["type"] ?? "") \($0["subject"] ?? "") from \($0["sender"] ?? "")" }
        #expect(events.filter { ($0["subject"] as? String) == "app/door" }.count == 1, "\(said)")
        #expect(events.filter { ($0["subject"] as? String) == "app/till" }.count == 1, "\(said)")
        #expect(
            Set(events.map { "\($0["subject"] ?? "") \($0["sender"] ?? "")" }) == ["app/door gw1", "app/till gw2"],
            "\(said)")
        let refused = try gateway.run(
            "journalctl -q --no-pager -o cat BEACOND_EVENT=mqtt.publish_refused BEACOND_EVENT=site.message_refused"
        ).stdout
        #expect(refused.isEmpty, "the shipped ACL refused a gateway: \(refused)")
    }
}
