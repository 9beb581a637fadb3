import BeaconCore

/// `site:` (SPEC §6.1): the broker, the locator's eligibility and Home Assistant discovery.
extension SectionReader {
    func readSite(_ node: Node, gateway: String, receivers: [ReceiverSpec]) -> SiteSettings? {
        let fields: [ConfigField<SiteSettings>] = [
            .identifier("id", \.id), .flag("locator", \.locator),
            .int("locator_priority", 0...1_000_000, \.locatorPriority),
            .init("gateways") { r, n, p, site in
                guard let list = r.reader.sequence(n, p) else { return }
                site.gateways = list.enumerated().compactMap { j, e in r.reader.identifier(e, "\(p)[\(j)]") }
            },
            .init("espresense") { r, n, p, site in
                site.foreign.espresense = r.readForeignSource(
                    n, p, names: "rooms", defaultPrefix: "espresense", receivers: receivers)
            },
            .init("openmqttgateway") { r, n, p, site in
                site.foreign.openMQTTGateway = r.readForeignSource(
                    n, p, names: "gateways", defaultPrefix: "home", receivers: receivers)
            },
            .init("home_assistant") { r, n, p, site in
                site.homeAssistantPrefix = "homeassistant"
                r.read(n, p, [.init("discovery_prefix", Self.readTopicLevel)], into: &site)
            },
        ]
        // The broker first: the rest is read into a site that has one.
        guard let f = reader.mapping(node, "site", allowed: ["mqtt"] + fields.map(\.key)),
            let mqttNode = required(f, "mqtt", in: node), let broker = readBroker(mqttNode, f.path("mqtt"))
        else { return nil }
        var site = SiteSettings(id: gateway, mqtt: broker)
        apply(fields, f, in: node, into: &site)
        return site
    }

    /// `site.home_assistant.discovery_prefix`: one topic level.
    private static func readTopicLevel(_ r: SectionReader, _ n: Node, _ p: String, _ site: inout SiteSettings) {
        guard let v = r.reader.string(n, p) else { return }
        guard isTopicLevel(v) else {
            return r.reader.fail(n, p, "expected a topic level without '/', '+', '#' or spaces, got \"\(v)\"")
        }
        site.homeAssistantPrefix = v
    }

    private func readBroker(_ node: Node, _ path: String) -> MQTTBroker? {
        let fields: [ConfigField<MQTTBroker>] = [
            .init("username") { r, n, p, broker in broker.username = r.reader.string(n, p) },
            .init("password_file") { r, n, p, broker in broker.passwordFile = r.readableFile(n, p) },
            .init("ca_file") { r, n, p, broker in
                guard let file = r.absolutePath(n, p) else { return }
                guard broker.tls else {
                    return r.reader.fail(n, p, "a CA file is for mqtts:// only; the url is \"\(broker.url)\"")
                }
                r.checkReadable(file, n, p)
                broker.caFile = file
            },
            .duration("keepalive", .seconds(5)...(.minutes(10)), \.keepalive),
            .init("events") { r, n, p, broker in
                guard let list = r.reader.sequence(n, p) else { return }
                broker.events = list.enumerated().compactMap { j, e in r.reader.string(e, "\(p)[\(j)]") }
            },
            .duration("max_age", .seconds(1)...(.hours(24 * 30)), \.maxAge),
        ]
        // The url first: the rest is read into the broker it names.
        guard let f = reader.mapping(node, path, allowed: ["url"] + fields.map(\.key)),
            let urlNode = required(f, "url", in: node), let url = reader.string(urlNode, f.path("url"))
        else { return nil }
        var broker: MQTTBroker
        switch MQTTBroker.parse(url) {
        case let .success(b): broker = b
        case let .failure(error):
            reader.fail(urlNode, f.path("url"), error.reason)
            return nil
        }
        apply(fields, f, in: node, into: &broker)
        if broker.passwordFile != nil, broker.username == nil, let n = f["password_file"] {
            reader.fail(n, f.path("password_file"), "a password needs a username (site.mqtt.username)")
        }
        return broker
    }

    /// An absolute path to a file, kept even when beacond cannot read it (the error says why
    /// not, once).
    func readableFile(_ node: Node, _ path: String) -> String? {
        guard let file = absolutePath(node, path) else { return nil }
        checkReadable(file, node, path)
        return file
    }

    func checkReadable(_ file: String, _ node: Node, _ path: String) {
        if let problem = fileReadable(file) { reader.fail(node, path, "cannot use \"\(file)\": \(problem)") }
    }

    /// Receivers that are the same adapter of the same gateway twice: each sighting would
    /// have two names. Reported at the second.
    func checkReceiverAdapters(_ receivers: [ReceiverSpec], _ node: Node) {
        var seen: [String: String] = [:]
        for r in receivers {
            let key = "\(r.gateway ?? "") \(r.adapter ?? r.id)"
            if let first = seen[key] {
                reader.fail(
                    node, "receivers",
                    "receivers \"\(first)\" and \"\(r.id)\" are both adapter \"\(r.adapter ?? r.id)\" of "
                        + (r.gateway.map { "gateway \"\($0)\"" } ?? "every gateway"))
            } else {
                seen[key] = r.id
            }
        }
    }

    static func isTopicLevel(_ s: String) -> Bool {
        !s.isEmpty && !s.contains(where: { $0 == "/" || $0 == "+" || $0 == "#" || $0 == " " })
    }
}
