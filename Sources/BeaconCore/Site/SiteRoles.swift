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

    public init(election: LocatorElection) { self.election = election }

    /// A gateway is a candidate while its status is online, it has been heard lately (this
    /// gateway: while connected), and its info says it may locate.
    public mutating func refresh(_ id: String, at now: Timestamp) {
        let me = id == election.me?.id
        let settled = connectedSince.map { now - $0 >= Self.settle } ?? false
        let alive =
            online[id] == true && (me ? connected && settled : lastHeard[id].map { now - $0 < Self.silence } ?? false)
        if alive, let info = info[id], info.locator {
            election.online(.init(id: id, priority: info.priority))
        } else {
            election.offline(id)
        }
    }
}
