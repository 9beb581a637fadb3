/// One topic of a site under `beacond/<site>/` (docs/sites.md, "Topics"). Its shape is written
/// here once, both ways: a gateway formats what it publishes and dispatches what it receives by
/// case, not by concatenating strings and comparing path levels in each place that needs one.
public enum SiteTopic: Sendable, Hashable {
    /// A gateway's batches of sightings (QoS 0).
    case sightings(gateway: String)
    /// `online`/`offline`, retained; the will.
    case status(gateway: String)
    /// What the gateway is (version, receivers), retained.
    case info(gateway: String)
    /// The locator's alerts, told to the others before it delivers them (`SiteDecision`).
    case decided(gateway: String)
    /// How far `gateway` delivered `webhook`, retained.
    case delivered(gateway: String, webhook: String)
    /// The locator's announcement, retained.
    case locator
    /// The locator's fit of every receiver (`AutoCalibration`), retained.
    case calibration
    /// The site's events by type (`zone.enter`, …), from the locator.
    case events(kind: String)
    /// An asset's retained `state` or `attributes`.
    case asset(id: String, field: String)
    /// A region's retained state.
    case regionState(client: String, region: String)
    /// A zone's retained `occupancy` (SPEC §8): how many assets are in it now.
    case zone(id: String, field: String)

    /// The topic's levels after the site's prefix.
    public var path: String {
        switch self {
        case let .sightings(g): "sightings/\(g)"
        case let .status(g): "gateways/\(g)/status"
        case let .info(g): "gateways/\(g)/info"
        case let .decided(g): "gateways/\(g)/decided"
        case let .delivered(g, w): "gateways/\(g)/delivered/\(w)"
        case .locator: "locator"
        case .calibration: "calibration"
        case let .events(kind): "events/\(kind)"
        case let .asset(id, field): "assets/\(id)/\(field)"
        case let .regionState(client, region): "regions/\(client)/\(region)/state"
        case let .zone(id, field): "zones/\(id)/\(field)"
        }
    }

    /// The topic whose levels after the prefix are `path`; nil for a shape the site does not use.
    public init?(path: Substring) {
        let levels: [String] = path.split(separator: "/", omittingEmptySubsequences: false).map { String($0) }
        if levels.contains(where: { $0.isEmpty }) { return nil }
        switch (levels.first, levels.count) {
        case ("sightings", 2): self = .sightings(gateway: levels[1])
        case ("gateways", 3):
            switch levels[2] {
            case "status": self = .status(gateway: levels[1])
            case "info": self = .info(gateway: levels[1])
            case "decided": self = .decided(gateway: levels[1])
            default: return nil
            }
        case ("gateways", 4) where levels[2] == "delivered": self = .delivered(gateway: levels[1], webhook: levels[3])
        case ("locator", 1): self = .locator
        case ("calibration", 1): self = .calibration
        case ("events", 2): self = .events(kind: levels[1])
        case ("assets", 3): self = .asset(id: levels[1], field: levels[2])
        case ("zones", 3): self = .zone(id: levels[1], field: levels[2])
        case ("regions", 4) where levels[3] == "state": self = .regionState(client: levels[1], region: levels[2])
        default: return nil
        }
    }

    /// The topics a gateway subscribes to, as MQTT filters (`+` for one level).
    public enum Filter: Sendable, CaseIterable {
        case sightings, status, info, decided, delivered, locator, assets, regions, zones

        public var path: String {
            switch self {
            case .sightings: "sightings/+"
            case .status: "gateways/+/status"
            case .info: "gateways/+/info"
            case .decided: "gateways/+/decided"
            case .delivered: "gateways/+/delivered/+"
            case .locator: "locator"
            case .assets: "assets/+/+"
            case .regions: "regions/+/+/state"
            case .zones: "zones/+/+"
            }
        }
    }
}

/// A site's topics under its prefix, `beacond/<site>/`: `SiteTopic`s formatted and parsed.
public struct SiteTopics: Sendable, Equatable {
    /// `beacond/<site>/`.
    public let prefix: String

    public init(prefix: String) { self.prefix = prefix }
    public init(site: String) { prefix = "beacond/\(site)/" }

    public subscript(_ topic: SiteTopic) -> String { prefix + topic.path }
    public func filter(_ filter: SiteTopic.Filter) -> String { prefix + filter.path }

    /// The site topic `topic` is, or nil: another site's, not a site's at all (Home
    /// Assistant's), or a shape the site does not use.
    public func parse(_ topic: String) -> SiteTopic? {
        guard topic.hasPrefix(prefix) else { return nil }
        return SiteTopic(path: topic.dropFirst(prefix.count))
    }

    /// Whether `topic` is under this site's prefix at all.
    public func contains(_ topic: String) -> Bool { topic.hasPrefix(prefix) }

    public func sightings(_ gateway: String) -> String { self[.sightings(gateway: gateway)] }
    public func status(_ gateway: String) -> String { self[.status(gateway: gateway)] }
    public func info(_ gateway: String) -> String { self[.info(gateway: gateway)] }
    public func decided(_ gateway: String) -> String { self[.decided(gateway: gateway)] }
    public func delivered(_ gateway: String, webhook: String) -> String {
        self[.delivered(gateway: gateway, webhook: webhook)]
    }
    public var locator: String { self[.locator] }
}
