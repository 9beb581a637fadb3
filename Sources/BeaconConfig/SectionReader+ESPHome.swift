import BeaconCore

extension SectionReader {
    /// `esphome:` — each proxy names a receiver of `receivers[]` and how to reach it.
    /// In a site each proxy's receiver names the gateway that connects to it.
    func readESPHome(_ node: Node, receivers: [ReceiverSpec], inSite: Bool) -> [ESPHomeProxySpec] {
        let known = Dictionary(receivers.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        guard let items = reader.sequence(node, "esphome") else { return [] }
        let fields: [ConfigField<ESPHomeProxySpec>] = [
            .int("port", 1...65535, \.port),
            .init("encryption_key_file") { r, n, p, spec in
                spec.encryptionKeyFile = r.readableFile(n, p)
                if let file = spec.encryptionKeyFile, let text = r.secretText(file),
                    case let .failure(problem) = ESPHomeProxySpec.key(text)
                {
                    r.reader.fail(n, p, "\(file) does not hold an ESPHome API key: \(problem.message)")
                }
            },
            .init("encryption_key") { r, n, p, spec in
                guard let text = r.reader.string(n, p) else { return }
                if case let .failure(problem) = ESPHomeProxySpec.key(text) {
                    return r.reader.fail(n, p, "not an ESPHome API key: \(problem.message)")
                }
                spec.encryptionKey = text
            },
            .string("password", \.password),
        ]
        var proxies: [ESPHomeProxySpec] = []
        var seen: [String: Int] = [:]
        for (i, item) in items.enumerated() {
            let path = "esphome[\(i)]"
            guard let f = reader.mapping(item, path, allowed: ["receiver", "host"] + fields.map(\.key)) else {
                continue
            }
            guard let receiverNode = required(f, "receiver", in: item),
                let receiver = reader.identifier(receiverNode, f.path("receiver")),
                let hostNode = required(f, "host", in: item), let host = reader.string(hostNode, f.path("host"))
            else { continue }
            guard let spec = known[receiver] else {
                reader.fail(
                    receiverNode, f.path("receiver"),
                    "no receiver \"\(receiver)\" in receivers: it gives the proxy's position")
                continue
            }
            if inSite, spec.gateway == nil {
                reader.fail(
                    receiverNode, f.path("receiver"),
                    "in a site, receiver \"\(receiver)\" names the gateway that connects to the proxy (gateway:), so that one connection hears it"
                )
            }
            if let problem = Self.hostProblem(host) {
                reader.fail(hostNode, f.path("host"), problem)
                continue
            }
            var proxy = ESPHomeProxySpec(receiver: receiver, host: host)
            apply(fields, f, in: item, into: &proxy)
            let secrets = ["encryption_key_file", "encryption_key", "password"].filter { f[$0] != nil }
            if secrets.count > 1, let n = f[secrets[1]] {
                reader.fail(n, f.path(secrets[1]), "give one of encryption_key_file, encryption_key and password")
            }
            if let first = seen[receiver] {
                reader.fail(receiverNode, f.path("receiver"), "receiver \"\(receiver)\" is esphome[\(first)]'s already")
            }
            seen[receiver] = seen[receiver] ?? i
            proxies.append(proxy)
        }
        return proxies
    }

    /// Why `host` cannot be a proxy's address, or nil: a name or an address, no scheme or port.
    static func hostProblem(_ host: String) -> String? {
        if host.isEmpty { return "expected the proxy's host name or address" }
        if host.contains("://") { return "a host, not a URL: write \"\(host.split(separator: "/").last ?? "")\"" }
        if host.contains(" ") || host.contains("/") { return "expected a host name or address, got \"\(host)\"" }
        if host.filter({ $0 == ":" }).count == 1 { return "the port goes in port:, not in host" }
        return nil
    }
}
