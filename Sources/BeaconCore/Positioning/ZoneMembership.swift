/// An asset in a zone: what the edge rule says of its position, and what is told.
///
/// The edge rule changes its say only when the position is `hysteresis / 2` past the edge on
/// the other side (never more than half the zone's own depth), so a fix jittering on an edge
/// keeps it. What is told — every output's membership, the alarms' enters and exits — is that
/// say weighed over `confirm` and held while it flaps (`ZoneDecision`): one decision at the
/// zone's confirm (the shortest of its alarms'), and one more per alarm that asks another.
struct ZoneMembership: Sendable, Equatable {
    /// The edge rule's say.
    var said = false
    /// The membership every output shows, and the alarms at the zone's confirm tell.
    var decision: ZoneDecision
    /// The alarms (by index) whose confirm is not the zone's: their own decisions.
    var alarmDecisions: [Int: ZoneDecision] = [:]
    /// Per alarm watching this zone: whether its dwell alert fired during this visit.
    var dwellFired: Set<Int> = []
    /// The visits (`zone.visit`), decided apart from the live state above.
    var visits = VisitSmoother()

    init(at t: Timestamp, zone: ZoneRuntime) {
        decision = ZoneDecision(confirm: zone.confirm, at: t)
        for (alarm, confirm) in zone.alarmConfirms { alarmDecisions[alarm] = ZoneDecision(confirm: confirm, at: t) }
    }

    var inside: Bool { decision.inside }
    /// When the asset crossed into the told membership.
    var since: Timestamp { decision.since }

    /// What each decision told: the zone's, then each alarm's own.
    struct Told {
        var shared: [ZoneDecision.Notice] = []
        var alarms: [(alarm: Int, notices: [ZoneDecision.Notice])] = []
    }

    mutating func shift(by d: TimeSpan) {
        decision.shift(by: d)
        for k in alarmDecisions.keys { alarmDecisions[k]!.shift(by: d) }
        visits.shift(by: d)
    }

    /// Applies a signed depth (positive inside): the edge rule's say, then each decision's.
    mutating func update(depth: Double, margin: Double, at t: Timestamp) -> Told {
        if said ? depth < -margin : depth > margin { said.toggle() }
        let now = said
        return each { $0.observe(now, at: t) }
    }

    /// The end of a replayed trace: each decision's crossing under way decided.
    mutating func finish(at t: Timestamp) -> Told { each { $0.finish(at: t) } }

    /// Leaves the zone (the asset went silent): out at once, in every decision.
    mutating func leave(at t: Timestamp) -> Told {
        said = false
        return each { $0.leave(at: t) }
    }

    /// Restored inside since `since` (a restart, as told before it).
    mutating func restore(since: Timestamp) {
        said = true
        decision.restore(inside: true, since: since)
        for k in alarmDecisions.keys { alarmDecisions[k]!.restore(inside: true, since: since) }
    }

    /// The zone's confirms changed (a reload): the decisions keep what they told.
    mutating func reconfigure(for zone: ZoneRuntime) {
        decision.confirm = zone.confirm
        var kept: [Int: ZoneDecision] = [:]
        for (alarm, confirm) in zone.alarmConfirms {
            var own = alarmDecisions[alarm] ?? decision
            own.confirm = confirm
            kept[alarm] = own
        }
        alarmDecisions = kept
    }

    private mutating func each(_ step: (inout ZoneDecision) -> [ZoneDecision.Notice]) -> Told {
        var told = Told(shared: step(&decision))
        if told.shared.contains(where: { if case .changed = $0 { true } else { false } }) { dwellFired = [] }
        for k in alarmDecisions.keys.sorted() {
            let notices = step(&alarmDecisions[k]!)
            if !notices.isEmpty { told.alarms.append((k, notices)) }
        }
        return told
    }
}

/// A zone as the tracker evaluates it.
struct ZoneRuntime: Sendable {
    enum Shape: Sendable {
        case polygon(level: Int, outline: Polygon, margin: Double)
        case nearReceiver(receiver: Int, within: Double, margin: Double)
    }

    var id: String
    var shape: Shape
    /// The confirm of the zone's told membership: the shortest of its alarms' (SPEC §10), so
    /// that no alarm tells a change before the membership shows it.
    var confirm = AlarmDefinition.defaultConfirm
    /// The zone's alarms (by index) that ask a longer confirm, with theirs.
    var alarmConfirms: [Int: TimeSpan] = [:]
    /// The Bayes grid's cells whose centres lie inside the outline (empty for a proximity
    /// zone or without a grid): the belief's mass over them is how sure the locator is that
    /// the asset is inside.
    var cells: [Int] = []

    init(_ zone: ZoneDefinition, receivers: [String: Int], hysteresis: Double) {
        id = zone.id
        switch zone.shape {
        case let .polygon(level, points):
            let outline = Polygon(points)
            shape = .polygon(level: level, outline: outline, margin: min(hysteresis / 2, outline.depth / 2))
        case let .nearReceiver(receiver, within):
            shape = .nearReceiver(receiver: receivers[receiver] ?? -1, within: within, margin: hysteresis / 2)
        }
    }

    /// How far inside (positive) or outside (negative) the zone an estimate is, and the
    /// margin to use. A proximity zone is judged by that receiver's own range to the tag.
    func depth(position: Point, level: Int, ranges: [Int: Double]) -> (depth: Double, margin: Double) {
        switch shape {
        case let .polygon(zoneLevel, outline, margin):
            guard zoneLevel == level else { return (-.infinity, margin) }
            return (outline.signedDistance(position), margin)
        case let .nearReceiver(receiver, within, margin):
            guard let range = ranges[receiver] else { return (-.infinity, margin) }
            return (within - range, margin)
        }
    }
}
