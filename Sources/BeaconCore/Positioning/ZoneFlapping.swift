/// Holds an asset × zone whose membership keeps changing without a stay (SPEC §10,
/// `zone.flapping`): instead of its enters and exits, one notice that it flaps, and once it
/// has settled, one that it stopped, with the membership it settled on.
///
/// Why: a pallet put down near a zone's edge is seen crossing it every minute or so, however
/// long the confirm (its estimate wanders 2 m for seconds), and a store that gets a hundred
/// "left the dock" an hour turns the alarm off. Nagios and Icinga hold a flapping service's
/// notifications and say "flapping" once; so does this. Flapping begins at the `changes`-th
/// decided change within `window` (the change is not told: the notice is); it ends once the
/// edge rule has not changed its mind for `settle`, and the confirmer weighs nothing.
public struct ZoneFlapping: Sendable, Equatable {
    public struct Rules: Sendable, Equatable {
        public var changes = 4
        public var window = TimeSpan.seconds(120)
        public var settle = TimeSpan.seconds(120)
        public init() {}
    }

    /// What is told of the asset in the zone.
    public enum Notice: Sendable, Equatable {
        /// An enter or exit, told as decided.
        case change(ZoneConfirmer.Change)
        /// It began to flap: since the first change of the run, with how many so far.
        case began(since: Timestamp, changes: Int)
        /// It settled (`inside`), after `changes` changes since `since`.
        case ended(since: Timestamp, changes: Int, inside: Bool)
    }

    public var rules: Rules
    /// The crossings of the changes told within `window`.
    private var recent: [Timestamp] = []
    /// Flapping since then, with how many changes (told and held).
    public private(set) var since: Timestamp?
    public private(set) var changes = 0
    /// When the edge rule last changed its mind while flapping.
    private var lastSaid: Timestamp?

    public init(rules: Rules = Rules()) { self.rules = rules }

    public var isFlapping: Bool { since != nil }

    /// A change the confirmer decided: told, or held as flapping (the notice it makes).
    public mutating func decided(_ change: ZoneConfirmer.Change, at t: Timestamp) -> Notice? {
        if since != nil {
            changes += 1
            lastSaid = t
            return nil
        }
        recent.removeAll { change.crossedAt - $0 >= rules.window }
        recent.append(change.crossedAt)
        guard recent.count >= rules.changes else { return .change(change) }
        (since, changes, lastSaid) = (recent[0], recent.count, t)
        recent = []
        return .began(since: since!, changes: changes)
    }

    /// The edge rule's say at `t` while flapping: ends it once settled. `inside` is the
    /// confirmer's membership, `weighing` whether it weighs a crossing.
    public mutating func tick(saidChange: Bool, inside: Bool, weighing: Bool, at t: Timestamp) -> Notice? {
        guard let began = since else { return nil }
        if saidChange || weighing { lastSaid = t }
        guard let last = lastSaid, t - last >= rules.settle else { return nil }
        let notice = Notice.ended(since: began, changes: changes, inside: inside)
        (since, changes, lastSaid) = (nil, 0, nil)
        return notice
    }

    /// The asset went silent or the zone was reset: no longer flapping, nothing told.
    public mutating func reset() {
        (recent, since, changes, lastSaid) = ([], nil, 0, nil)
    }

    mutating func shift(by d: TimeSpan) {
        recent = recent.map { $0 + d }
        since = since.map { $0 + d }
        lastSaid = lastSaid.map { $0 + d }
    }
}
