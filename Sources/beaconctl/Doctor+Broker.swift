import BeaconConfig
import BeaconRuntime
import MQTT
import POSIX

extension Doctor {
    /// The site's broker, as the daemon reaches it (SPEC §6.3): the name resolves, the port
    /// accepts, and then a real MQTT login (TLS and credentials included) is accepted. Each
    /// failure says which step and how to fix it.
    ///
    /// The TCP step is the daemon's own when it answers (`seen`); the login is this process's.
    func brokerCheck(_ site: SiteSettings, gateway: String, seen: DaemonReachability? = nil) -> Check {
        let broker = site.mqtt
        let endpoint = (host: broker.host, port: "\(broker.port)")
        if let failure = connectionFailure(kind: "broker", id: site.id, endpoint, seen: seen) {
            return Check(
                name: "broker", verdict: .fail, detail: "\(broker.url): \(failure.detail)",
                fix: failure.sandboxed
                    ? Self.sandboxFix(host: broker.host)
                    : failure.detail.contains("does not resolve")
                        ? "correct site.mqtt.url's host, or the gateway's DNS"
                        : "start the broker (systemctl status mosquitto on the store server), or open the port to this gateway"
            )
        }
        var password: String?
        if let file = broker.passwordFile {
            do {
                password = try readSecretFile(file)
            } catch {
                return Check(
                    name: "broker", verdict: .warn,
                    detail: "\(broker.url) accepts connections; the login was not tried: \(error)",
                    fix: "run beaconctl doctor as root (or as beacond), which can read \(file)")
            }
        }
        let settings = MQTTClient.Settings(
            host: broker.host, port: broker.port, tls: broker.tls, caFile: broker.caFile, username: broker.username,
            password: password, clientID: "beacond-\(site.id)-\(gateway)", keepaliveSeconds: 10)
        if let failure = MQTTProbe.failure(settings) {
            let fix: String
            if failure.contains("authori") || failure.contains("user name or password") {
                fix =
                    "check site.mqtt.username and the password in \(broker.passwordFile ?? "site.mqtt.password_file") "
                    + "against the broker's password file"
            } else if broker.tls {
                fix =
                    "check that the broker speaks TLS on \(broker.port) with a certificate for \(broker.host) "
                    + "signed by \(broker.caFile ?? "a CA in /etc/ssl/certs")"
            } else {
                fix = "check the broker's listener on \(broker.port) (mosquitto -v shows why it refuses)"
            }
            return Check(name: "broker", verdict: .fail, detail: "\(broker.url): \(failure)", fix: fix)
        }
        return Check(
            name: "broker", verdict: .ok,
            detail: "\(broker.url) accepts this gateway's login\(broker.tls ? " over TLS" : "")")
    }
}
