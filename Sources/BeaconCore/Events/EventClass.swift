/// What an event is to everything that keeps or sends it, decided here once: how long the
/// history keeps it, whether it waits for an fsync before anyone hears of it, which go first
/// when memory or the disk must shed some, its QoS on the broker, and whether a site hands it
/// over by id.
///
/// Why one place: four places kept their own sets of types, and they disagreed —
/// `beacon.proximity` was kept and sent as a superseded measurement, yet synced and reserved
/// through a full disk as an alert (issue 53). Every place now asks this type, and a test
/// checks each of them against it for every kind of event.
public enum EventClass: Sendable, Equatable, CaseIterable {
    /// A change someone must hear of: a region's, a zone's, a tag's. Durable before it is
    /// delivered, delivered at least once, in order; in a site, handed over by id.
    case alert
    /// A measurement the next one supersedes within seconds: a position, a ranging round, a
    /// proximity class. Kept a shorter time, not synced each, first to go when something must,
    /// sent at QoS 0; not handed over (each gateway's next one replaces it).
    case state
    /// This gateway's own condition (an adapter's state): durable and delivered as an alert,
    /// but no other gateway has it to hand over.
    case local

    public init(_ payload: EventPayload) {
        switch payload {
        case .regionState, .regionEnter, .regionExit, .regionDwell, .regionFailed, .zone, .tag: self = .alert
        case .ranging, .beaconProximity, .assetPosition: self = .state
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
        "asset.position": .state, "ranging": .state, "beacon.proximity": .state, "adapter.state": .local,
    ]

    /// Superseded by the next one: kept shorter, not synced, shed first, QoS 0.
    public var isSuperseded: Bool { self == .state }

    /// Handed over by id between a site's gateways.
    public var isHandedOver: Bool { self == .alert }

    /// Every CloudEvents type (`beacond.<kind>`) of this class.
    public var types: [String] {
        EventPayload.allKinds.filter { EventClass(type: $0) == self }.map { "beacond." + $0 }
    }
}
