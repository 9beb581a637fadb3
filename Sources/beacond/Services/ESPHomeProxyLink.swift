import BeaconConfig
import BeaconCore
import ESPHome

/// One proxy's connection as the ESPHome thread holds it: its socket and session, how often
/// it has failed, what waits to be sent, and how fast it forwards.
struct ProxyLink {
    let spec: ESPHomeProxySpec
    let receiver: ReceiverID
    var fd: Int32 = -1
    var connecting = false
    var attemptStarted = Timestamp(nanoseconds: 0)
    /// The resolver's completions when this link began waiting for its name; nil when not.
    var resolvingSince: Int?
    var session: ProxySession?
    var psk: [UInt8]?
    var connectedSince: Timestamp?
    var identityLogged = false
    var failures = 0
    var retryAt = Timestamp(nanoseconds: 0)
    var advertisements = 0
    var refused = 0
    var lastError: String?
    /// Bytes the proxy has not read yet (`ESPHomeProxies.send`): written when it polls writable.
    var unsent: [UInt8] = []
    /// Connections that ended within `steadyAfter` of their Hello, summed for the log.
    var flaps = LogSummary()
    var rate = AdvertisementRate()

    init(spec: ESPHomeProxySpec, receiver: ReceiverID) {
        self.spec = spec
        self.receiver = receiver
    }

    /// How long a connection must have lasted for its end to start the backoff again at 1 s.
    /// Why: a proxy that drops beacond right after Hello (old firmware, when Home Assistant
    /// takes the connection back) was reconnected every 1.5 s for ever — 48,000 warnings a day.
    static let steadyAfter = TimeSpan.minutes(1)

    /// Counts a failure at `now`; true when the connection that ended had lasted less than
    /// `steadyAfter` since its Hello (a flap).
    mutating func countFailure(at now: Timestamp) -> Bool {
        let lasted = connectedSince.map { now - $0 }
        if let lasted, lasted >= Self.steadyAfter {
            failures = 1
            return false
        }
        failures += 1
        return lasted != nil
    }

    /// The most bytes that may wait for a proxy that does not read: a few seconds of pings and
    /// a goodbye are a few dozen bytes, so one that holds this much is not reading at all.
    static let unsentLimit = 64 * 1024
}

/// A bound on how many advertisements one proxy may hand in a second, with what was shed.
/// Why: one connection forwarding two million a second took 1.85 cores; a real proxy forwards
/// a few hundred (its radio's duty cycle), so the bound costs a real one nothing.
struct AdvertisementRate {
    static let perSecond = 2_000
    private var windowStart = Timestamp(nanoseconds: 0)
    private var inWindow = 0
    /// Shed since the start.
    private(set) var shed = 0
    /// Shed and not yet told in the log.
    var untold = LogSummary()

    /// How many of `count` advertisements arriving at `now` may be taken; the rest are shed.
    mutating func admit(_ count: Int, at now: Timestamp) -> Int {
        if now - windowStart >= .seconds(1) || now < windowStart { (windowStart, inWindow) = (now, 0) }
        let taken = max(0, min(count, Self.perSecond - inWindow))
        inWindow += taken
        shed += count - taken
        return taken
    }
}
