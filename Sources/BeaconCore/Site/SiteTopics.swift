/// The topics of one site (SPEC §6.2), under `beacond/<site>/`, written in one place.
///
/// A gateway writes only under `sightings/<its id>` and `gateways/<its id>/…` (and, as the
/// locator, the site's outputs), so that a broker's ACL can give each gateway's user exactly
/// those (docs/sites.md): what a gateway says of itself, its deliveries and its decisions
/// included, cannot be said in its name by another client.
public struct SiteTopics: Sendable, Equatable {
    /// `beacond/<site>/`.
    public let prefix: String

    public init(prefix: String) { self.prefix = prefix }

    public func sightings(_ gateway: String) -> String { prefix + "sightings/" + gateway }
    public func status(_ gateway: String) -> String { prefix + "gateways/\(gateway)/status" }
    public func info(_ gateway: String) -> String { prefix + "gateways/\(gateway)/info" }
    /// The locator's alerts, told to the others before it delivers them (`SiteDecision`).
    public func decided(_ gateway: String) -> String { prefix + "gateways/\(gateway)/decided" }
    /// How far `gateway` delivered `webhook` (retained).
    public func delivered(_ gateway: String, webhook: String) -> String {
        prefix + "gateways/\(gateway)/delivered/\(webhook)"
    }
    public var locator: String { prefix + "locator" }
}
