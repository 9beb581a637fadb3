import BeaconCore

/// `site.espresense` and `site.openmqttgateway` (SPEC §9): another system's receivers, each
/// room or gateway name mapped to a receiver of `receivers[]` (which gives its position).
extension SectionReader {
    /// `key`: `espresense` (names under `rooms`) or `openmqttgateway` (under `gateways`).
    func readForeignSource(
        _ node: Node, _ path: String, names: String, defaultPrefix: String, receivers: [ReceiverSpec]
    ) -> ForeignReceivers.Source? {
        guard let f = reader.mapping(node, path, allowed: ["prefix", names]) else { return nil }
        var source = ForeignReceivers.Source(prefix: defaultPrefix)
        with(f, "prefix") { n, p in
            guard let v = reader.string(n, p) else { return }
            let levels = v.split(separator: "/", omittingEmptySubsequences: false)
            guard !levels.isEmpty, levels.allSatisfy({ Self.isTopicLevel(String($0)) }) else {
                return reader.fail(n, p, "expected topic levels without '+', '#', spaces or empty levels, got \"\(v)\"")
            }
            source.prefix = v
        }
        guard let mapNode = required(f, names, in: node) else { return nil }
        guard case let .mapping(m) = mapNode else {
            reader.fail(mapNode, f.path(names), "expected a mapping of \(names.dropLast()) names to receiver ids")
            return nil
        }
        let known = Dictionary(receivers.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        for (keyNode, value) in m {
            guard case let .scalar(k) = keyNode, Self.isTopicLevel(k.string) else {
                reader.fail(keyNode, f.path(names), "a \(names.dropLast()) name is one topic level (no '/', '+', '#')")
                continue
            }
            let p = "\(f.path(names)).\(k.string)"
            guard let id = reader.string(value, p) else { continue }
            guard let receiver = known[id] else {
                reader.fail(value, p, "no receiver \"\(id)\" in receivers: it gives the \(names.dropLast())'s position")
                continue
            }
            if receiver.gateway != nil {
                reader.fail(
                    value, p,
                    "receiver \"\(id)\" names a gateway; one fed by another system's messages is no gateway's adapter")
                continue
            }
            source.receivers[k.string] = id
        }
        return source
    }
}
