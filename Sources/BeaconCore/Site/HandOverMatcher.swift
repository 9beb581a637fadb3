/// Pairs the locator's decisions with this gateway's own copies of the same alerts (SPEC §6.3:
/// a hand-over neither repeats nor re-decides), whichever arrives first: a standby's engine may
/// be ahead of the locator's (its own sightings reach it 250 ms before the locator's batch
/// does) or behind it.
///
/// Two events are the same alert when their `HandOverKey`s are equal and their times
/// within `tolerance`; of several candidates, the oldest is taken, so that an enter, exit,
/// enter of one asset in one zone pair up in order. What stays unpaired for `keep` is
/// forgotten: an own alert that the locator never decided is delivered under its own id if
/// this gateway takes over while it is newer than the old locator's furthest delivery less
/// 5 s (`SiteDeliveryGate.undecidedBefore`: that one cannot have delivered it), and
/// a decision this gateway never made is left to the locator that made it.
public struct HandOverMatcher: Sendable {
    /// An alert this gateway's engine made, waiting for the locator's decision.
    struct Own: Sendable {
        var id: String
        var time: Timestamp
        var seen: Timestamp
        var serial: Int
    }

    private var decisions: [HandOverKey: [(decision: SiteDecision, seen: Timestamp, serial: Int)]] = [:]
    private var own: [HandOverKey: [Own]] = [:]
    private var count = 0
    private var lastTrim: Timestamp?
    /// Every entry in the order it arrived (its serial, key and side), so that the oldest is
    /// found at the head, not by looking through every key: the flood `limit` exists for made
    /// each insert past it a scan of 20,000 keys under the lock the engine's thread takes for
    /// every stored alert (issue 51, item 8). Entries paired or trimmed since are skipped when
    /// met; the queue is compacted as its head advances.
    private var arrivals: [(serial: Int, key: HandOverKey, mine: Bool)] = []
    private var head = 0
    private var nextSerial = 0

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
        decisions[decision.key, default: []].append((decision, now, arrived(decision.key, mine: false)))
        count += 1
        if count > Self.limit { dropOldest() }
        return nil
    }

    /// This gateway's engine made the alert `id`: the locator's decision of it when one came
    /// already (paired and forgotten). Otherwise, when `wait`, it waits for one.
    public mutating func madeHere(id: String, key: HandOverKey, time: Timestamp, wait: Bool, at now: Timestamp)
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
            own[key, default: []].append(Own(id: id, time: time, seen: now, serial: arrived(key, mine: true)))
            count += 1
            if count > Self.limit { dropOldest() }
        }
        return nil
    }

    /// The next serial, queued as arriving now.
    private mutating func arrived(_ key: HandOverKey, mine: Bool) -> Int {
        nextSerial += 1
        arrivals.append((nextSerial, key, mine))
        return nextSerial
    }

    /// Forgets this gateway's alerts waiting for a decision: it has become the locator, and
    /// they are its own decisions now.
    public mutating func forgetOwn() {
        count -= own.values.reduce(0) { $0 + $1.count }
        own = [:]  // their arrivals are skipped when met
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
        // Mostly stale by now: kept at most twice what is held (and a little), in order.
        if arrivals.count - head > 2 * count + 1024 {
            arrivals =
                (decisions.flatMap { key, list in list.map { ($0.serial, key, false) } }
                + own.flatMap { key, list in list.map { ($0.serial, key, true) } }).sorted { $0.0 < $1.0 }
            head = 0
        }
    }

    /// Forgets the oldest entry held: the first in `arrivals` still there.
    private mutating func dropOldest() {
        while head < arrivals.count {
            let (serial, key, mine) = arrivals[head]
            head += 1
            if mine, let i = own[key]?.firstIndex(where: { $0.serial == serial }) {
                own[key]!.remove(at: i)
                if own[key]!.isEmpty { own[key] = nil }
            } else if !mine, let i = decisions[key]?.firstIndex(where: { $0.serial == serial }) {
                decisions[key]!.remove(at: i)
                if decisions[key]!.isEmpty { decisions[key] = nil }
            } else {
                continue
            }
            count -= 1
            break
        }
        if head > 4096, head * 2 > arrivals.count {
            arrivals.removeFirst(head)
            head = 0
        }
    }
}
