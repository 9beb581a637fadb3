/// Which gateway of a site is its locator (SPEC §6.3): the one that alone delivers the site's
/// events. Every gateway runs this same rule on what the broker tells it, so they agree
/// without talking: among the eligible gateways online, the highest `locator_priority`, and
/// of equal priorities the lowest id. The chosen one announces itself on the retained
/// `locator` topic with the next epoch; a gateway is the locator while the newest
/// announcement names it and the rule still chooses it.
///
/// Why a rule over retained state and not a vote: the broker already knows who is online
/// (each gateway's retained status, and its last will when it dies), so the next locator can
/// take over the moment the will arrives, with no quorum to gather and nothing to time out
/// but the broker's own keepalive.
public struct LocatorElection: Sendable, Equatable {
    public struct Candidate: Sendable, Equatable {
        public var id: String
        public var priority: Int
        public init(id: String, priority: Int) {
            self.id = id
            self.priority = priority
        }
    }

    /// The retained `locator` topic's payload: `{"gateway": ..., "epoch": N, "since": ...}`.
    public struct Announcement: Sendable, Equatable {
        public var gateway: String
        public var epoch: Int64
        public var since: Timestamp
        public init(gateway: String, epoch: Int64, since: Timestamp) {
            self.gateway = gateway
            self.epoch = epoch
            self.since = since
        }
    }

    /// This gateway, when it may be the locator; nil for a relay only.
    public let me: Candidate?
    /// Eligible gateways online, as their retained status and info say (this one included
    /// while it is connected).
    public private(set) var online: [String: Candidate] = [:]
    /// The newest announcement seen.
    public private(set) var announced: Announcement?

    public init(me: Candidate?) { self.me = me }

    /// The gateway the rule chooses now, or nil when no eligible gateway is online.
    public var chosen: String? {
        online.values.max { a, b in a.priority != b.priority ? a.priority < b.priority : a.id > b.id }?.id
    }

    /// Whether this gateway delivers the site's events now.
    public var isLocator: Bool {
        guard let me else { return false }
        return announced?.gateway == me.id && chosen == me.id
    }

    public mutating func online(_ candidate: Candidate) { online[candidate.id] = candidate }
    public mutating func offline(_ id: String) { online[id] = nil }

    /// The highest epoch there is: JSON carries it as a number, exact below 2^53.
    public static let maxEpoch: Int64 = 8_999_999_999_999_999

    /// An announcement from the broker; an older epoch than the one known is ignored (a
    /// retained message replayed late) — unless it comes `live` from the gateway the rule
    /// chooses: a forged epoch at `maxEpoch` would otherwise pin the site's announcement to
    /// whatever it named, since no later one could be newer (issue 38 #20).
    public mutating func seen(_ announcement: Announcement, live: Bool = false) {
        if let known = announced, !(live && announcement.gateway == chosen) {
            if announcement.epoch < known.epoch { return }
            // Of one epoch, the first said stands (a replay of it changes nothing).
            if announcement.epoch == known.epoch, announcement.gateway != known.gateway { return }
        }
        announced = announcement
    }

    /// The announcement to publish, when the rule chooses this gateway and the newest
    /// announcement names another (or none); it is taken as seen. The epoch stops at
    /// `maxEpoch`.
    public mutating func decide(at now: Timestamp) -> Announcement? {
        guard let me, chosen == me.id, announced?.gateway != me.id else { return nil }
        let epoch = min((announced?.epoch ?? 0) + 1, Self.maxEpoch)
        let next = Announcement(gateway: me.id, epoch: epoch, since: now)
        announced = next
        return next
    }
}

extension LocatorElection.Announcement {
    /// The retained payload, `{"gateway":"gw1","epoch":3,"since":"2026-11-26T01:50:00.000Z"}`.
    public var text: String {
        var w = JSONTextWriter()
        w.openObject()
        w.member("gateway", gateway)
        w.member("epoch", Double(epoch))
        w.member("since", RFC3339.format(since))
        w.closeObject()
        return w.text
    }

    /// An announcement read from the broker (its `since` is taken as when it was seen), or nil
    /// when the payload is not one: an empty retained message (cleared), or rubbish.
    public init?(payload: String, seenAt now: Timestamp) {
        guard let value = try? JSONParser.parse(payload), let gateway = value["gateway"]?.stringValue,
            Identifier.problem(gateway) == nil, let epoch = value["epoch"]?.numberValue, epoch >= 0,
            epoch <= Double(LocatorElection.maxEpoch),
            epoch == epoch.rounded()
        else { return nil }
        self.init(gateway: gateway, epoch: Int64(epoch), since: now)
    }
}

/// What a gateway says of itself on its retained `gateways/<id>/info` topic, so that the
/// others can run the same election: whether it may be the locator, and its priority.
public struct GatewayInfo: Sendable, Equatable {
    public var locator: Bool
    public var priority: Int

    public init(locator: Bool, priority: Int) {
        self.locator = locator
        self.priority = priority
    }

    public var text: String {
        var w = JSONTextWriter()
        w.openObject()
        w.key("locator")
        w.bool(locator)
        w.key("priority")
        w.int(priority)
        w.closeObject()
        return w.text
    }

    public init?(payload: String) {
        guard let value = try? JSONParser.parse(payload), case let .bool(locator)? = value["locator"],
            let priority = value["priority"]?.numberValue, priority == priority.rounded(), abs(priority) < 1e9
        else { return nil }
        self.init(locator: locator, priority: Int(priority))
    }
}
