import BeaconCore

/// `site:` (SPEC §6.1): the broker, the locator's eligibility and Home Assistant discovery.
extension SectionReader {
    func readSite(_ node: Node, gateway: String) -> SiteSettings? {
        guard
            let f = reader.mapping(
                node, "site", allowed: ["id", "mqtt", "locator", "locator_priority", "home_assistant", "gateways"]),
            let mqttNode = required(f, "mqtt", in: node), let broker = readBroker(mqttNode, f.path("mqtt"))
        else { return nil }
        var site = SiteSettings(id: gateway, mqtt: broker)
        with(f, "id") { n, p in if let v = reader.identifier(n, p) { site.id = v } }
        with(f, "locator") { n, p in if let v = reader.bool(n, p) { site.locator = v } }
        with(f, "locator_priority") { n, p in if let v = reader.int(n, p, 0...1_000_000) { site.locatorPriority = v } }
        with(f, "gateways") { n, p in
            guard let list = reader.sequence(n, p) else { return }
            site.gateways = list.enumerated().compactMap { j, e in reader.identifier(e, "\(p)[\(j)]") }
        }
        with(f, "home_assistant") { n, p in
            guard let ha = reader.mapping(n, p, allowed: ["discovery_prefix"]) else { return }
            site.homeAssistantPrefix = "homeassistant"
            with(ha, "discovery_prefix") { n, p in
                if let v = reader.string(n, p) {
                    guard Self.isTopicLevel(v) else {
                        return reader.fail(n, p, "expected a topic level without '/', '+', '#' or spaces, got \"\(v)\"")
                    }
                    site.homeAssistantPrefix = v
                }
            }
        }
        return site
    }

    private func readBroker(_ node: Node, _ path: String) -> MQTTBroker? {
        guard
            let f = reader.mapping(
                node, path, allowed: ["url", "username", "password_file", "ca_file", "keepalive", "events", "max_age"]),
            let urlNode = required(f, "url", in: node), let url = reader.string(urlNode, f.path("url"))
        else { return nil }
        var broker: MQTTBroker
        switch MQTTBroker.parse(url) {
        case let .success(b): broker = b
        case let .failure(error):
            reader.fail(urlNode, f.path("url"), error.reason)
            return nil
        }
        with(f, "username") { n, p in broker.username = reader.string(n, p) }
        with(f, "password_file") { n, p in
            guard let file = absolutePath(n, p) else { return }
            if let problem = fileReadable(file) { reader.fail(n, p, "cannot use \"\(file)\": \(problem)") }
            broker.passwordFile = file
        }
        with(f, "ca_file") { n, p in
            guard let file = absolutePath(n, p) else { return }
            guard broker.tls else {
                return reader.fail(n, p, "a CA file is for mqtts:// only; the url is \"\(url)\"")
            }
            if let problem = fileReadable(file) { reader.fail(n, p, "cannot use \"\(file)\": \(problem)") }
            broker.caFile = file
        }
        with(f, "keepalive") { n, p in
            if let v = reader.duration(n, p, min: .seconds(5), max: .minutes(10)) { broker.keepalive = v }
        }
        with(f, "events") { n, p in
            guard let list = reader.sequence(n, p) else { return }
            broker.events = list.enumerated().compactMap { j, e in reader.string(e, "\(p)[\(j)]") }
        }
        with(f, "max_age") { n, p in
            if let v = reader.duration(n, p, min: .seconds(1), max: .hours(24 * 30)) { broker.maxAge = v }
        }
        if broker.passwordFile != nil, broker.username == nil, let n = f["password_file"] {
            reader.fail(n, f.path("password_file"), "a password needs a username (site.mqtt.username)")
        }
        return broker
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
