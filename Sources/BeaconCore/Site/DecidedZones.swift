/// What the site last decided for each asset, zone and alarm (SPEC §6.3): the last zone alert
/// any locator told — `enter`, `dwell` or `exit`. A new locator checks its own alerts against
/// it before it delivers them.
///
/// Why: every gateway's engine makes the site's alerts from the same sightings, but not at the
/// same instants (a batch waits 250 ms), so near a zone's edge one engine can see an asset
/// leave and come back that the other saw stay. A standby drops its own alerts that no locator
/// decided once they are 5 s older than the locator's last delivery, and that window can fall
/// between such an exit and its enter: the exit goes, the enter stays, and when this gateway
/// takes over it would deliver the enter — a second enter, under a new id, for an asset the
/// consumer was told is inside (the hand-over test caught one in 67 alerts). Checked against
/// what was decided, that enter is a repeat and is not delivered; what the consumer sees
/// alternates as an asset's visits do.
public struct DecidedZones: Sendable {
    public enum Alert: String, Sendable {
        case enter, dwell, exit
    }

    /// Where a zone alert is about: an asset, a zone, an alarm.
    public struct Place: Hashable, Sendable {
        public var asset: String
        public var zone: String
        public var alarm: String
    }

    /// Per place, the last alert decided, its event id (the same alert told again, as a new
    /// locator tells what it holds, is not a repeat of itself) and its time.
    private var last: [Place: (alert: Alert, id: String, time: Timestamp)] = [:]
    /// At most this many places are kept (decisions come from the network): past it, all are
    /// forgotten, and the next alerts are taken as they come.
    public static let limit = 100_000

    public init() {}

    /// A zone alert's place and kind from its key (type `beacond.zone.<kind>`, the asset its
    /// subject); nil for any other event.
    public static func parse(key: HandOverKey) -> (place: Place, alert: Alert)? {
        guard key.type.hasPrefix("beacond.zone."), let alert = Alert(rawValue: String(key.type.dropFirst(13))) else {
            return nil
        }
        return (Place(asset: key.subject, zone: key.zone, alarm: key.alarm), alert)
    }

    /// A locator decided the alert `id` of `key` at `time` (this gateway or another). One
    /// older than what is known for its place changes nothing: a decision replayed late (or
    /// a stale one sent on purpose) must not undo a newer one.
    public mutating func decided(key: HandOverKey, id: String, time: Timestamp) {
        guard let (place, alert) = Self.parse(key: key) else { return }
        if let known = last[place], known.time > time { return }
        if last.count >= Self.limit, last[place] == nil { last.removeAll() }
        last[place] = (alert, id, time)
    }

    /// Whether the alert of `key` would tell the consumer nothing new, or contradict what it
    /// was told: an enter or a dwell while it is inside by the last decision (an enter or a
    /// dwell), an exit while outside. False for a place nothing was decided for yet, for the
    /// last decided alert itself (`id`), and for any other event.
    public func repeats(key: HandOverKey, id: String) -> Bool {
        guard let (place, alert) = Self.parse(key: key), let (previous, decidedID, _) = last[place],
            decidedID != id
        else { return false }
        switch alert {
        case .enter: return previous != .exit
        case .dwell: return previous == .dwell || previous == .exit
        case .exit: return previous == .exit
        }
    }
}
