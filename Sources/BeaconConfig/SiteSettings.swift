import BeaconCore

/// `site:` (SPEC §6.1): every gateway of a store runs the same file, only `gateway.id`
/// differs. They meet on the broker of `mqtt`; one of them at a time, the locator, delivers
/// the site's events.
public struct SiteSettings: Sendable, Equatable {
    /// The topic prefix is `beacond/<id>/`. Default: the gateway's id.
    public var id: String
    public var mqtt: MQTTBroker
    /// May act as the site's locator; false: relay only.
    public var locator = true
    /// The highest eligible priority online is the locator (ties: the lower gateway id).
    public var locatorPriority = 100
    /// Gateways of the site that no receiver names (a locator with no radio of its own):
    /// with the receivers' `gateway`s, the gateways that take part. Any other id on the
    /// site's topics is refused (`unknown_gateway`).
    public var gateways: [String] = []
    /// Publish Home Assistant MQTT discovery under this prefix; nil: none.
    public var homeAssistantPrefix: String?
    /// ESPresense nodes and OpenMQTTGateway/Theengs gateways on the broker (SPEC §9).
    public var foreign = ForeignReceivers()
}

/// `site.mqtt:`, the broker.
public struct MQTTBroker: Sendable, Equatable {
    /// As written, for messages: `mqtt://host:1883` or `mqtts://host:8883`.
    public var url: String
    public var host: String
    public var port: Int
    public var tls: Bool
    public var username: String?
    /// Read at start; its contents, without the trailing newline, are the password.
    public var passwordFile: String?
    /// mqtts only: the certificate authorities; nil: the system's.
    public var caFile: String?
    /// The broker takes a gateway for dead after 1.5 times this without a word from it, and
    /// then sends its will: 5 s keeps a silent death's hand-over under 10 s (SPEC §6.3).
    public var keepalive = TimeSpan.seconds(5)
    /// Which events the locator publishes on `events/<type>` (globs, as a webhook's `events`).
    public var events = ["*"]
    /// An event the broker has not taken within this long becomes a dead letter, as a
    /// webhook's does (`beaconctl outbox`).
    public var maxAge = TimeSpan.hours(24)

    /// The broker of `url`, or why it is not one.
    public static func parse(_ url: String) -> Result<MQTTBroker, BrokerURLError> {
        let tls: Bool
        let rest: Substring
        if url.hasPrefix("mqtt://") {
            tls = false
            rest = url.dropFirst(7)
        } else if url.hasPrefix("mqtts://") {
            tls = true
            rest = url.dropFirst(8)
        } else {
            return .failure(BrokerURLError("expected mqtt://host:port or mqtts://host:port, got \"\(url)\""))
        }
        let authority = rest.hasSuffix("/") ? rest.dropLast() : rest
        guard !authority.isEmpty, !authority.contains("/"), !authority.contains("@") else {
            return .failure(
                BrokerURLError(
                    "expected only a host and a port after the scheme (user and password have keys of their own), got \"\(url)\""
                ))
        }
        var host = String(authority)
        var port = tls ? 8883 : 1883
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            guard let p = Int(authority[authority.index(after: colon)...]), (1...65535).contains(p) else {
                return .failure(BrokerURLError("expected a port 1...65535 after \":\" in \"\(url)\""))
            }
            port = p
            host = String(authority[..<colon])
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return .failure(BrokerURLError("expected a host name in \"\(url)\"")) }
        return .success(MQTTBroker(url: url, host: host, port: port, tls: tls))
    }

    public init(url: String, host: String, port: Int, tls: Bool) {
        self.url = url
        self.host = host
        self.port = port
        self.tls = tls
    }
}

public struct BrokerURLError: Error, Sendable, Equatable {
    public var reason: String
    init(_ reason: String) { self.reason = reason }
}
