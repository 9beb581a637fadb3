/// What is told of one asset in one zone at one `confirm` (SPEC §10): the edge rule's say,
/// confirmed (`ZoneConfirmer`), held while it flaps (`ZoneFlapping`), and the membership
/// that was told — the one every output shows, so that no one sees an asset inside a zone
/// whose alarm said nothing.
public struct ZoneDecision: Sendable, Equatable {
    /// Something to tell.
    public enum Notice: Sendable, Equatable {
        /// An enter (`inside`) or exit, crossed at `crossedAt`.
        case changed(inside: Bool, crossedAt: Timestamp)
        /// It began to flap, with the changes since `since`.
        case flapping(since: Timestamp, changes: Int)
        /// It stopped flapping, settled `inside` (an enter or exit follows when that is not
        /// what was last told).
        case settled(since: Timestamp, changes: Int, inside: Bool)
    }

    /// The membership told, and when the asset crossed into it.
    public private(set) var inside = false
    public private(set) var since: Timestamp
    private var confirmer: ZoneConfirmer
    private var flapping: ZoneFlapping
    private var lastSaid = false

    public init(confirm: TimeSpan, flapping rules: ZoneFlapping.Rules = .init(), at t: Timestamp) {
        since = t
        confirmer = ZoneConfirmer(confirm: confirm, at: t)
        flapping = ZoneFlapping(rules: rules)
    }

    public var confirm: TimeSpan {
        get { confirmer.confirm }
        set { confirmer.confirm = newValue }
    }

    /// Flapping since then (nil: not flapping).
    public var flappingSince: Timestamp? { flapping.since }

    /// The edge rule says `said` at `t`.
    public mutating func observe(_ said: Bool, at t: Timestamp) -> [Notice] {
        defer { lastSaid = said }
        if let change = confirmer.observe(inside: said, at: t) { return decided(change, at: t) }
        guard
            case let .ended(since, changes, settled)? = flapping.tick(
                saidChange: said != lastSaid, inside: confirmer.inside, weighing: confirmer.isWeighing, at: t)
        else { return [] }
        return [.settled(since: since, changes: changes, inside: settled)]
            + (settled == inside ? [] : tell(settled, crossedAt: confirmer.since))
    }

    /// The end of a replayed trace: a crossing being weighed is decided with what there is.
    public mutating func finish(at t: Timestamp) -> [Notice] {
        confirmer.finish(at: t).map { decided($0, at: t) } ?? []
    }

    /// A change the confirmer decided: told, or the flapping it begins, or held while it flaps.
    private mutating func decided(_ change: ZoneConfirmer.Change, at t: Timestamp) -> [Notice] {
        switch flapping.decided(change, at: t) {
        case let .change(c)?: return tell(c.inside, crossedAt: c.crossedAt)
        case let .began(since, changes)?: return [.flapping(since: since, changes: changes)]
        default: return []
        }
    }

    /// The asset went silent (or its zone went): out now, without weighing; a flap ends with it.
    public mutating func leave(at t: Timestamp) -> [Notice] {
        lastSaid = false
        confirmer.set(inside: false, at: t)
        var notices: [Notice] = []
        if let began = flapping.since {
            notices.append(.settled(since: began, changes: flapping.changes, inside: false))
        }
        flapping.reset()
        if inside { notices += tell(false, crossedAt: t) }
        return notices
    }

    /// A restart restored it inside since `since` (as told before the stop).
    public mutating func restore(inside: Bool, since: Timestamp) {
        confirmer.set(inside: inside, at: since)
        lastSaid = inside
        (self.inside, self.since) = (inside, since)
    }

    private mutating func tell(_ now: Bool, crossedAt: Timestamp) -> [Notice] {
        guard now != inside else { return [] }
        (inside, since) = (now, crossedAt)
        return [.changed(inside: now, crossedAt: crossedAt)]
    }

    mutating func shift(by d: TimeSpan) {
        since = since + d
        confirmer.shift(by: d)
        flapping.shift(by: d)
    }
}
