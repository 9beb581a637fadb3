import BeaconCore

/// Warnings on a valid configuration that does less than it says: an event glob that matches
/// no event type, a webhook or an alarm that can never fire, a daemon that watches nothing.
/// Each would pass `--check-config` and then, silently, never deliver anything; an operator
/// finds out weeks later, when the alert that mattered did not come.
extension SectionReader {
    func advise(_ root: Fields, _ config: Config) {
        let producible = Self.producibleKinds(config)
        if let hooks = root["webhooks"].flatMap(items) {
            for (i, (hook, item)) in zip(config.webhooks, hooks).enumerated() {
                let path = "webhooks[\(i)].events"
                let node = item["events"]
                adviseGlobs(hook.events, node, path)
                adviseNeverFires(hook.events, node ?? item.node, path, producible, config, what: "webhook \(hook.id)")
            }
        }
        if let site = config.site, case let .mapping(m)? = root["site"],
            case let .mapping(mqtt)? = m.pairs.first(where: { key($0.key) == "mqtt" })?.value
        {
            adviseGlobs(site.mqtt.events, mqtt.pairs.first { key($0.key) == "events" }?.value, "site.mqtt.events")
        }
        if let alarms = root["alarms"].flatMap(items) {
            for (i, (alarm, item)) in zip(config.alarms, alarms).enumerated() {
                if let why = Self.whyNeverFires(alarm, config) {
                    reader.warn(item.node, "alarms[\(i)]", "alarm \(alarm.id) can never fire: \(why)")
                }
            }
        }
        adviseTagPace(root, config)
        if config.clients.isEmpty && config.assets.isEmpty {
            reader.warn(
                nil, "",
                "no clients (regions to monitor) and no assets (tags to place): the daemon will only count "
                    + "advertisements; regions can still be added through the API")
        }
        if config.webhooks.isEmpty && config.site == nil {
            reader.warn(
                nil, "",
                "no webhooks: events go only to the history, the API's stream and standard output")
        }
    }

    /// A tag whose configured interval (`simulation.tags`) is so long that `missing_after` would
    /// call it missing between two of its packets: with a packet lost now and then, fewer than
    /// three intervals is not silence (the rule that paces exits, SPEC §7.3).
    private func adviseTagPace(_ root: Fields, _ config: Config) {
        guard let tags = config.simulation?.tags, !tags.isEmpty,
            case let .mapping(simulation)? = root["simulation"],
            let list = simulation.pairs.first(where: { key($0.key) == "tags" }).flatMap({ items($0.value) })
        else { return }
        for (i, (tag, item)) in zip(tags, list).enumerated() {
            guard let interval = tag.interval, let asset = config.assets.first(where: { $0.id == tag.asset }) else {
                continue
            }
            let missingAfter = asset.missingAfter ?? config.tags.missingAfter
            guard missingAfter < interval * 3 else { continue }
            reader.warn(
                item["interval"] ?? item.node, "simulation.tags[\(i)].interval",
                "asset \(tag.asset) advertises every \(interval), and its missing_after (\(missingAfter)) is shorter "
                    + "than three of those: it would be reported missing between its own packets; raise "
                    + "missing_after to \(interval * 3) or more")
        }
    }

    /// Globs that match no event type at all: a typo (`regoin.*`) or a type that does not
    /// exist (`zone.enterd`).
    private func adviseGlobs(_ patterns: [String], _ node: Node?, _ path: String) {
        let nodes: [Node?] = node.flatMap { n in if case let .sequence(s) = n { Array(s) } else { nil } } ?? []
        for (j, pattern) in patterns.enumerated() {
            let glob = EventTypeGlob([pattern])
            guard !EventPayload.allKinds.contains(where: { glob.matches(type: $0) }) else { continue }
            let families = Set(EventPayload.allKinds.map { $0.split(separator: ".").first.map { "\($0).*" } ?? $0 })
            let guess = NodeReader.closest(to: pattern, in: EventPayload.allKinds + families.sorted())
            reader.warn(
                j < nodes.count ? nodes[j] : node, "\(path)[\(j)]",
                "\"\(pattern)\" matches no event type" + (guess.map { " (did you mean \"\($0)\"?)" } ?? "")
                    + "; the types are \(EventPayload.allKinds.joined(separator: ", "))")
        }
    }

    /// A webhook whose globs match only types this configuration never produces.
    private func adviseNeverFires(
        _ patterns: [String], _ node: Node, _ path: String, _ producible: Set<String>, _ config: Config,
        what: String
    ) {
        let glob = EventTypeGlob(patterns)
        let wanted = EventPayload.allKinds.filter { glob.matches(type: $0) }
        guard !wanted.isEmpty, !wanted.contains(where: producible.contains) else { return }
        let reasons = Set(wanted.map { Self.whyNotProduced($0, config) }).sorted()
        reader.warn(
            node, path,
            "\(what) can never fire: it takes \(wanted.joined(separator: ", ")), and "
                + reasons.joined(separator: "; "))
    }

    /// The event kinds this configuration can produce. Region events, ranging and proximity
    /// always can: regions may be added through the API at any time.
    static func producibleKinds(_ config: Config) -> Set<String> {
        var kinds: Set<String> = [
            "region.state", "region.enter", "region.exit", "region.dwell", "region.failed", "ranging",
            "beacon.proximity", "adapter.state",
        ]
        guard !config.assets.isEmpty else { return kinds }
        // A tag's health needs no receiver positions: only that it is heard.
        kinds.formUnion(["asset.battery_low", "asset.missing", "asset.found"])
        guard !config.receivers.isEmpty else { return kinds }
        kinds.insert("asset.position")
        // Visits are told whatever the alarms (SPEC §10).
        if !config.zones.isEmpty { kinds.insert("zone.visit") }
        for alarm in config.alarms where whyNeverFires(alarm, config) == nil {
            for condition in alarm.on { kinds.insert("zone.\(condition.rawValue)") }
        }
        return kinds
    }

    static func whyNotProduced(_ kind: String, _ config: Config) -> String {
        if config.assets.isEmpty { return "no assets are configured (assets:)" }
        if config.receivers.isEmpty { return "no receivers have positions (receivers:), so no asset is placed" }
        guard kind.hasPrefix("zone.") else { return "\(kind) is not produced" }
        if kind == "zone.visit" { return "no zones are configured (zones:)" }
        let condition = kind.dropFirst(5)
        if config.alarms.isEmpty { return "no alarms are configured (alarms:); zone events come from alarms" }
        return "no alarm has on: [\(condition)]"
    }

    /// Why an alarm can never fire, or nil when it can.
    static func whyNeverFires(_ alarm: AlarmSpec, _ config: Config) -> String? {
        if config.assets.isEmpty { return "no assets are configured, so none can enter its zones" }
        if config.receivers.isEmpty { return "no receivers have positions, so no asset is placed in its zones" }
        if alarm.on.contains(.dwell) && alarm.on.count == 1 && alarm.dwell == nil {
            return "on: [dwell] without a dwell time"
        }
        return nil
    }

    /// A list item and its keys, for placing a warning on the item or one of its values.
    struct Item {
        var node: Node
        var fields: [String: Node]
        subscript(key: String) -> Node? { fields[key] }
    }

    /// A list's items with their keys (nil when the node is not a list).
    private func items(_ node: Node) -> [Item]? {
        guard case let .sequence(list) = node else { return nil }
        return list.map { item in
            var fields: [String: Node] = [:]
            if case let .mapping(m) = item { for (k, v) in m { fields[key(k)] = v } }
            return Item(node: item, fields: fields)
        }
    }

    private func key(_ node: Node) -> String {
        if case let .scalar(s) = node { return s.string }
        return ""
    }
}
