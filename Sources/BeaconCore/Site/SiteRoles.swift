/// What a gateway knows of the site's roles: each gateway's retained status and info, and the
/// election they feed (`LocatorElection`).
public struct SiteRoles: Sendable {
    public var election: LocatorElection
    public var online: [String: Bool] = [:]
    public var info: [String: GatewayInfo] = [:]
    /// When each other gateway was last heard: a batch, or its status going online.
    public var lastHeard: [String: Timestamp] = [:]
    /// Whether this gateway is connected to the broker: one that is not cannot know who else
    /// is alive, so it is no candidate (no split brain behind a partition).
    public var connected = false
    /// Since when (this gateway's clock): a gateway is no candidate before `settle` has passed,
    /// so that the others' retained status, info and announcement have arrived. Without it, two
    /// gateways started together could each see only itself for a moment, each announce, and
    /// each deliver the first alerts under its own ids.
    public var connectedSince: Timestamp?
    public static let settle = TimeSpan.milliseconds(1500)
    /// When the silence check last ran (every 250 ms while this process runs).
    public var lastCheck: Timestamp?
    /// At most this many gateways are tracked: ids come from the network.
    public static let maxGateways = 256
    /// A gateway not heard for this long is no candidate, whatever its retained status says.
    /// Gateways send a batch every second at least (`SiteLink.heartbeat`); a hung or
    /// unpowered one closes no connection, and the broker's keepalive would take up to 1.5 ×
    /// keepalive and its own check interval to send the will.
    public static let silence = TimeSpan.seconds(4)
    /// Back on the broker after an outage, the others whose status says online count as alive
    /// until then (`rejoinGrace` after this gateway's connect), however long ago they were
    /// last heard: they were away with the broker, not silent, and are reconnecting too (the
    /// client's backoff brings each back within 5 s of the broker). Without it, the first
    /// gateway back after a broker restart took the locator's role from the live one still
    /// reconnecting, which never heard the decisions made meanwhile (issue 51, item 0).
    public var rejoinUntil: Timestamp?
    public static let rejoinGrace = TimeSpan.seconds(10)

    /// The gateway the newest announcement named before the current one, and until when its
    /// decisions are still taken: those it published just before it handed over may arrive
    /// after the next one's announcement.
    public var previousLocator: (id: String, until: Timestamp)?
    public static let decisionGrace = TimeSpan.seconds(10)

    public init(election: LocatorElection) { self.election = election }

    /// This gateway is connected again: see `rejoinUntil`.
    public mutating func rejoined(at now: Timestamp) { rejoinUntil = now + Self.rejoinGrace }

    /// Whether a `decided` message from `gateway` is taken: only the site's locator decides —
    /// the gateway the newest announcement names and the rule chooses (or the one before it,
    /// within `decisionGrace`), never this gateway's own name. Why: any gateway's account may
    /// write its own `decided` topic, and a standby's decisions would otherwise put forged
    /// bodies on the locator's alerts, or make it drop its own as repeats (issue 51, item 3).
    public func mayDecide(_ gateway: String, at now: Timestamp) -> Bool {
        guard gateway != election.me?.id else { return false }
        if gateway == election.announced?.gateway, gateway == election.chosen { return true }
        if let previous = previousLocator, previous.id == gateway, now < previous.until { return true }
        return false
    }

    /// The newest announcement named `before` until a change just made: that gateway's late
    /// decisions are taken for `decisionGrace` more.
    public mutating func announcementChanged(from before: String?, at now: Timestamp) {
        guard let before, before != election.announced?.gateway else { return }
        previousLocator = (before, now + Self.decisionGrace)
    }

    /// A gateway is a candidate while its status is online, it has been heard lately (this
    /// gateway: while connected), and its info says it may locate.
    public mutating func refresh(_ id: String, at now: Timestamp) {
        let me = id == election.me?.id
        let settled = connectedSince.map { now - $0 >= Self.settle } ?? false
        let heard = lastHeard[id].map { now - $0 < Self.silence } ?? false
        let rejoining = rejoinUntil.map { now < $0 } ?? false
        let alive = online[id] == true && (me ? connected && settled : heard || rejoining)
        if alive, let info = info[id], info.locator {
            election.online(.init(id: id, priority: info.priority))
        } else {
            election.offline(id)
        }
    }
}
