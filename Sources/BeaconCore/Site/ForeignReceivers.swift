/// `site.espresense` and `site.openmqttgateway` (SPEC §9): receivers of other systems on the
/// site's broker, each room or gateway name mapped to one of `receivers[]`.
public struct ForeignReceivers: Sendable, Equatable {
    /// One system's topics: its prefix and its names → receiver ids.
    public struct Source: Sendable, Equatable {
        public var prefix: String
        public var receivers: [String: String]
        public init(prefix: String, receivers: [String: String] = [:]) {
            self.prefix = prefix
            self.receivers = receivers
        }
    }

    public var espresense: Source?
    public var openMQTTGateway: Source?
    public init() {}

    public var isEmpty: Bool { espresense == nil && openMQTTGateway == nil }

    /// What to subscribe to (QoS 0: a sighting lost is followed by the next).
    public var filters: [String] { ForeignIntake.System.allCases.compactMap(filter) }

    /// The topic filter of `system`, when configured.
    public func filter(_ system: ForeignIntake.System) -> String? {
        switch system {
        case .espresense: espresense.map { "\($0.prefix)/devices/+/+" }
        case .openMQTTGateway: openMQTTGateway.map { "\($0.prefix)/+/BTtoMQTT/+" }
        }
    }

    /// The receivers fed this way: no gateway's adapters.
    public var receiverIDs: Set<String> {
        Set((espresense?.receivers.values.map { $0 } ?? []) + (openMQTTGateway?.receivers.values.map { $0 } ?? []))
    }

    /// The room or gateway name of `receiver`, and which system it is in.
    public func name(of receiver: String) -> (system: ForeignIntake.System, name: String)? {
        if let n = espresense?.receivers.first(where: { $0.value == receiver })?.key { return (.espresense, n) }
        if let n = openMQTTGateway?.receivers.first(where: { $0.value == receiver })?.key {
            return (.openMQTTGateway, n)
        }
        return nil
    }
}

/// Takes ESPresense's and OpenMQTTGateway's messages off the site's broker and decides what
/// reaches the engine, as `SiteIntake` does for the gateways' batches: bounded, every message
/// dropped counted by reason, pure (no clock, no I/O) so each case has an exact test.
public struct ForeignIntake {
    public enum System: String, Sendable, CaseIterable {
        case espresense
        case openMQTTGateway = "openmqttgateway"
    }

    public struct Outcome: Sendable, Equatable {
        public var system: System
        public var sighting: Sighting?
        /// Why it was dropped, as counted: `<system>.<reason>`.
        public var dropped: String?
        /// What to log, with the reason (none for an unmapped name already told).
        public var problem: String?
        /// A room or gateway not mapped, the first time it is seen: worth a log line, once.
        public var newUnmapped: String?
    }

    public let settings: ForeignReceivers
    /// Unmapped names already told, at most `unmappedLimit` (then no more are told).
    private var told: Set<String> = []
    static let unmappedLimit = 64
    /// No message of theirs is near this: ESPresense's are about 250 bytes, OpenMQTTGateway's
    /// with both data fields about 300.
    public static let maxBytes = 4096

    public init(settings: ForeignReceivers) { self.settings = settings }

    /// What became of a message on `topic`; nil when the topic is none of theirs.
    public mutating func take(topic: String, payload: UnsafeRawBufferPointer, at now: Timestamp) -> Outcome? {
        if let source = settings.espresense, let (_, room) = ESPresenseMessage.parseTopic(topic, prefix: source.prefix)
        {
            return take(.espresense, name: room, receiver: source.receivers[room], payload) {
                ESPresenseMessage.sighting($0, receiver: $1, at: now)
            }
        }
        if let source = settings.openMQTTGateway,
            let gateway = OpenMQTTGatewayMessage.parseTopic(topic, prefix: source.prefix)
        {
            return take(.openMQTTGateway, name: gateway, receiver: source.receivers[gateway], payload) {
                OpenMQTTGatewayMessage.sighting($0, receiver: $1, at: now)
            }
        }
        return nil
    }

    private mutating func take(
        _ system: System, name: String, receiver: String?, _ payload: UnsafeRawBufferPointer,
        read: (UnsafeRawBufferPointer, String) -> Result<Sighting, ForeignMessageError>
    ) -> Outcome {
        var out = Outcome(system: system)
        func drop(_ reason: String, _ problem: String) -> Outcome {
            out.dropped = "\(system.rawValue).\(reason)"
            out.problem = problem
            return out
        }
        guard let receiver else {
            // Counted each time, told once: the problem only with the name's first message.
            let what = system == .espresense ? "room" : "gateway"
            out.dropped = "\(system.rawValue).unmapped_\(what)"
            if !told.contains(name), told.count < Self.unmappedLimit {
                told.insert(name)
                out.newUnmapped = name
                out.problem = "\(what) \"\(name.prefix(64))\" is not mapped to a receiver"
            }
            return out
        }
        guard payload.count <= Self.maxBytes else {
            return drop("too_large", "\(payload.count) bytes, more than \(Self.maxBytes)")
        }
        switch read(payload, receiver) {
        case let .success(s): out.sighting = s
        case let .failure(e): return drop(e.reason, e.detail)
        }
        return out
    }
}
