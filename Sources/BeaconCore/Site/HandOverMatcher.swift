/// Pairs the locator's decisions with this gateway's own copies of the same alerts (SPEC §6.3:
/// a hand-over neither repeats nor re-decides), whichever arrives first: a standby's engine may
/// be ahead of the locator's (its own sightings reach it 250 ms before the locator's batch
/// does) or behind it.
///
/// Two events are the same alert when their `SiteDecision.key`s are equal and their times
/// within `tolerance`; of several candidates, the oldest is taken, so that an enter, exit,
/// enter of one asset in one zone pair up in order. What stays unpaired for `keep` is
/// forgotten: an own alert that the locator never decided is delivered under its own id if
/// this gateway takes over (the old locator cannot have delivered what it never decided), and
/// a decision this gateway never made is left to the locator that made it.
public struct HandOverMatcher: Sendable {
    /// An alert this gateway's engine made, waiting for the locator's decision.
    struct Own: Sendable {
        var id: String
        var time: Timestamp
        var seen: Timestamp
    }

    private var decisions: [String: [(decision: SiteDecision, seen: Timestamp)]] = [:]
    private var own: [String: [Own]] = [:]
    private var count = 0
    private var lastTrim: Timestamp?

    /// How far apart two gateways' engines may place the same alert: a batch's 250 ms, a
    /// smoothed RSSI that crosses a threshold a few packets later, a clock NTP keeps within
    /// milliseconds. An alert of one key cannot repeat this fast (enter and exit are debounced).
    public static let tolerance = TimeSpan.seconds(10)
    /// Unpaired events are kept this long.
    public static let keep = TimeSpan.seconds(60)
    /// At most this many unpaired events are kept (a flood from the locator, a burst of alerts):
    /// the oldest go first.
    public static let limit = 20_000

    public init() {}

    /// Unpaired events held now.
    public var held: Int { count }

    /// The locator decided `decision`: the id of this gateway's own copy when it has one (it
    /// is paired and forgotten), else nil (the decision waits for one).
    public mutating func decided(_ decision: SiteDecision, at now: Timestamp) -> String? {
        trim(at: now)
        if let i = own[decision.key]?.firstIndex(where: { Self.near($0.time, decision.time) }) {
            let mine = own[decision.key]!.remove(at: i)
            count -= 1
            if own[decision.key]!.isEmpty { own[decision.key] = nil }
            return mine.id
        }
        decisions[decision.key, default: []].append((decision, now))
        count += 1
        if count > Self.limit { dropOldest() }
        return nil
    }

    /// This gateway's engine made the alert `id`: the locator's decision of it when one came
    /// already (paired and forgotten). Otherwise, when `wait`, it waits for one.
    public mutating func madeHere(id: String, key: String, time: Timestamp, wait: Bool, at now: Timestamp)
        -> SiteDecision?
    {
        trim(at: now)
        if let i = decisions[key]?.firstIndex(where: { Self.near($0.decision.time, time) }) {
            let theirs = decisions[key]!.remove(at: i).decision
            count -= 1
            if decisions[key]!.isEmpty { decisions[key] = nil }
            return theirs
        }
        if wait {
            own[key, default: []].append(Own(id: id, time: time, seen: now))
            count += 1
            if count > Self.limit { dropOldest() }
        }
        return nil
    }

    /// Forgets this gateway's alerts waiting for a decision: it has become the locator, and
    /// they are its own decisions now.
    public mutating func forgetOwn() {
        count -= own.values.reduce(0) { $0 + $1.count }
        own = [:]
    }

    private static func near(_ a: Timestamp, _ b: Timestamp) -> Bool {
        a - b <= tolerance && b - a <= tolerance
    }

    /// Forgets what waited past `keep` (looked for once a second), and the oldest beyond `limit`.
    private mutating func trim(at now: Timestamp) {
        if let last = lastTrim, now - last < .seconds(1), now >= last { return }
        lastTrim = now
        let cutoff = now - Self.keep
        for key in Array(decisions.keys) {
            decisions[key]!.removeAll { $0.seen < cutoff }
            if decisions[key]!.isEmpty { decisions[key] = nil }
        }
        for key in Array(own.keys) {
            own[key]!.removeAll { $0.seen < cutoff }
            if own[key]!.isEmpty { own[key] = nil }
        }
        count = decisions.values.reduce(0) { $0 + $1.count } + own.values.reduce(0) { $0 + $1.count }
    }

    private mutating func dropOldest() {
        let theirs = decisions.min { $0.value[0].seen < $1.value[0].seen }
        let mine = own.min { $0.value[0].seen < $1.value[0].seen }
        if let theirs, mine.map({ theirs.value[0].seen <= $0.value[0].seen }) ?? true {
            decisions[theirs.key]!.removeFirst()
            if decisions[theirs.key]!.isEmpty { decisions[theirs.key] = nil }
        } else if let mine {
            own[mine.key]!.removeFirst()
            if own[mine.key]!.isEmpty { own[mine.key] = nil }
        }
        count -= 1
    }
}
