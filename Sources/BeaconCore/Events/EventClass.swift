/// What an event is to everything that keeps or sends it, decided here once: whether it is
/// stored at all or kept in memory as state (SPEC §4.4), how long the history keeps it,
/// whether it waits for an fsync before anyone hears of it, which go first when memory or the
/// disk must shed some, its QoS on the broker, whether an output that is behind gets each of
/// them or only the latest, and whether a site hands it over by id.
///
/// Why one place: four places kept their own sets of types, and they disagreed —
/// `beacon.proximity` was kept and sent as a superseded measurement, yet synced and reserved
/// through a full disk as an alert (issue 53). Every place now asks this type, and a test
/// checks each of them against it for every kind of event.
public enum EventClass: Sendable, Equatable, CaseIterable {
    /// A change someone must hear of: a region's, a zone's, a tag's. Durable before it is
    /// delivered, delivered at least once, in order; in a site, handed over by id.
    case alert
    /// A measurement the next one supersedes within seconds, but an event all the same (SPEC
    /// §4.4: everything but positions is stored before it is delivered): a ranging round, a
    /// proximity class. Kept a shorter time, written with the next alert's fsync rather than
    /// one of its own, first to go when something must, sent at QoS 0; not handed over.
    case measurement
    /// An asset's position: state, not an event to keep (SPEC §4.4). Never written to the
    /// history or an outbox — a store's positions were nearly all it wrote to its flash card —
    /// but kept in memory for the history's recent end and the stream, conflated for an output
    /// that is behind (the latest of each asset, not a backlog), and on the disk only as the
    /// asset's saved state, at most a minute old.
    case position
    /// This gateway's own condition (an adapter's state): durable and delivered as an alert,
    /// but no other gateway has it to hand over.
    case local

    public init(_ payload: EventPayload) {
        switch payload {
        case .regionState, .regionEnter, .regionExit, .regionDwell, .regionFailed, .zone, .tag, .zoneVisit:
            self = .alert
        case .ranging, .beaconProximity: self = .measurement
        case .assetPosition: self = .position
        case .adapterState: self = .local
        }
    }

    /// The class of an event known by its type (`asset.position` or `beacond.asset.position`),
    /// as the history, the outboxes and the broker carry it. A type it does not know is an
    /// alert: kept and sent as carefully as any.
    public init(type: String) {
        let kind = type.hasPrefix("beacond.") ? type.dropFirst(8) : Substring(type)
        self = Self.notAlerts[String(kind)] ?? .alert
    }

    /// The kinds that are not alerts (`EventClassTests` checks it against `init(_:)` for every
    /// payload).
    static let notAlerts: [String: EventClass] = [
        "asset.position": .position, "ranging": .measurement, "beacon.proximity": .measurement, "adapter.state": .local,
    ]

    /// Superseded by the next one: kept shorter, not synced, shed first, QoS 0.
    public var isSuperseded: Bool { self == .measurement || self == .position }

    /// Kept in memory only, and conflated for an output that is behind (SPEC §4.4).
    public var isState: Bool { self == .position }

    /// Handed over by id between a site's gateways.
    public var isHandedOver: Bool { self == .alert }

    /// Every CloudEvents type (`beacond.<kind>`) of this class.
    public var types: [String] {
        EventPayload.allKinds.filter { EventClass(type: $0) == self }.map { "beacond." + $0 }
    }
}
