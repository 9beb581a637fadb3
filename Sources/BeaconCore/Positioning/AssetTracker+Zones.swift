/// What a fix means for the site: a position published when due, zones entered and left,
/// a tag gone quiet lost, and the alarms those raise.
extension AssetTracker {
    mutating func publishIfDue(_ a: Int, _ estimate: AssetFix, at t: Timestamp, events: inout [Event]) {
        if let last = states[a].published, let at = states[a].publishedAt {
            guard t - at >= settings.publishInterval else { return }
            let dx = estimate.position.x - last.position.x
            let dy = estimate.position.y - last.position.y
            let zonesChanged =
                estimate.zones != last.zones || estimate.flapping != last.flapping || estimate.level != last.level
                || estimate.moving != last.moving
            guard zonesChanged || (dx * dx + dy * dy).squareRoot() >= settings.minMove else { return }
        }
        states[a].published = estimate
        states[a].publishedAt = t
        events.append(Event(time: t, payload: .assetPosition(estimate)))
    }

    mutating func updateZones(
        _ a: Int, estimate: AssetFix, ranges: [Int: Double], at t: Timestamp, events: inout [Event]
    ) {
        for z in zones.indices {
            let (depth, margin) = zones[z].depth(position: estimate.position, level: estimate.level, ranges: ranges)
            let told = states[a].zones[z].update(depth: depth, margin: margin, at: t)
            tell(told, a, zone: z, position: estimate.position, level: estimate.level, at: t, events: &events)
            guard states[a].zones[z].inside else { continue }
            for alarm in alarmsByZone[z] {
                guard let dwell = alarms[alarm].dwell, alarms[alarm].on.contains(.dwell),
                    !states[a].zones[z].dwellFired.contains(alarm), t - states[a].zones[z].since >= dwell,
                    applies(alarm, to: a)
                else { continue }
                states[a].zones[z].dwellFired.insert(alarm)
                guard alarms[alarm].active else { continue }
                events.append(
                    Event(
                        time: t,
                        payload: .zone(
                            ZoneAlert(
                                alarm: alarms[alarm].id, asset: assets[a].id, zone: zones[z].id, condition: .dwell,
                                position: estimate.position, level: estimate.level, dwell: t - states[a].zones[z].since,
                                crossedAt: states[a].zones[z].since)
                        )))
            }
        }
    }

    /// Feeds each zone's visit smoother this tick's evidence (`evidence`: a fix was made; its
    /// belief's mass inside, or for a zone without cells its live state as a weak mass) and
    /// tells the visits that closed. (A zone without cells weighs the edge rule's say: the
    /// smoother looks ahead on its own, and the told membership is `confirm` late.)
    mutating func smoothVisits(_ a: Int, evidence: Bool, at t: Timestamp, events: inout [Event]) {
        for z in zones.indices {
            var mass: Double?
            if evidence {
                mass =
                    zones[z].cells.isEmpty || z >= states[a].zoneMass.count
                    ? (states[a].zones[z].said ? 0.9 : 0.1) : states[a].zoneMass[z]
            }
            let changes = states[a].zones[z].visits.observe(mass: mass, at: t, rules: visitRules)
            tell(changes, a, zone: z, at: t, events: &events)
        }
    }

    /// A visit ended is told when decided (up to `visit_lag` after it ended), with its own
    /// times in its data; both ends are kept for the analytics at their own times.
    mutating func tell(_ changes: [VisitChange], _ a: Int, zone z: Int, at t: Timestamp, events: inout [Event]) {
        tell(changes, asset: assets[a].id, zone: zones[z].id, at: t, events: &events)
    }

    mutating func tell(
        _ changes: [VisitChange], asset: String, zone: String, at t: Timestamp, events: inout [Event]
    ) {
        for change in changes {
            switch change {
            case let .began(entered):
                hold(ZoneTransition(zone: zone, asset: asset, entered: true, time: entered, visit: true))
            case let .ended(entered, left):
                hold(ZoneTransition(zone: zone, asset: asset, entered: false, time: left, visit: true))
                events.append(
                    Event(
                        time: t, payload: .zoneVisit(ZoneVisit(asset: asset, zone: zone, entered: entered, left: left)))
                )
            }
        }
    }

    var visitRules: VisitRules { definition.visits }

    /// Per zone, in configuration order: how much of the asset's belief lay inside it at its
    /// last fix, with that fix; nil for an unknown asset or one without a belief.
    public func zoneMass(of asset: String) -> (mass: [Double], fix: AssetFix, walking: Double)? {
        guard let a = assetIndex[asset], !states[a].zoneMass.isEmpty, let fix = states[a].estimate else { return nil }
        return (states[a].zoneMass, fix, states[a].belief?.walkingProbability ?? 1)
    }

    /// Per zone, in configuration order: what the edge rule says of the asset's last fix,
    /// before any confirm or flapping hold (the benchmarks weigh it at each confirm).
    public func edgeSays(of asset: String) -> [Bool]? {
        assetIndex[asset].map { a in states[a].zones.map(\.said) }
    }

    /// Not heard for `lostAfter`: the asset leaves every zone it was in, at its last position.
    mutating func lose(_ a: Int, at t: Timestamp, events: inout [Event]) {
        states[a].lost = true
        // Heard again, it starts from a fresh belief; meanwhile its cells are not kept.
        states[a].belief = nil
        let last = states[a].estimate
        for z in zones.indices {
            tell(states[a].zones[z].visits.close(at: t, rules: visitRules), a, zone: z, at: t, events: &events)
        }
        for z in zones.indices {
            let told = states[a].zones[z].leave(at: t)
            tell(told, a, zone: z, position: last?.position, level: last?.level, at: t, events: &events)
        }
        states[a].estimate?.zones = []
    }

    /// A reload that removed or reshaped a zone, or removed an asset, ends what the old
    /// tracker had there: the live membership (the analytics count it closed at the reload,
    /// not open for ever, SPEC §8) and the visit under way, told as `zone.visit` as a loss
    /// tells it (SPEC §10). A reshaped zone's visits begin again when its new shape places
    /// them.
    mutating func endVisits(leftBy old: AssetTracker, at t: Timestamp, events: inout [Event]) {
        for (o, asset) in old.assets.enumerated() {
            let a = assetIndex[asset.id]
            for (oz, zone) in old.definition.zones.enumerated() {
                let kept = a.flatMap { a in definition.zones.firstIndex(of: zone).map { states[a].zones[$0] } }
                var was = old.states[o].zones[oz]
                if was.inside && kept?.inside != true {
                    hold(ZoneTransition(zone: zone.id, asset: asset.id, entered: false, time: t))
                }
                guard kept == nil else { continue }
                tell(
                    was.visits.close(at: t, rules: old.visitRules), asset: asset.id, zone: zone.id, at: t,
                    events: &events)
            }
        }
    }

    /// Keeps a transition for the analytics until it has settled (`releaseSettled`).
    mutating func hold(_ transition: ZoneTransition) {
        guard recordsTransitions else { return }
        var i = held.endIndex
        while i > held.startIndex, held[i - 1].time > transition.time { i -= 1 }
        held.insert(transition, at: i)
    }

    /// Lets the held transitions up to `time` into `transitions`, in the order of their times.
    mutating func releaseSettled(upTo time: Timestamp) {
        let settled = held.prefix { $0.time <= time }
        guard !settled.isEmpty else { return }
        transitions += settled
        held.removeFirst(settled.count)
    }

    /// The visits told as begun and not yet ended, each since its enter.
    var visitsUnderWay: [ZoneHours.OpenVisit] {
        states.indices.flatMap { a in
            zones.indices.compactMap { z in
                states[a].zones[z].visits.toldVisit.map {
                    ZoneHours.OpenVisit(zone: zones[z].id, asset: assets[a].id, entered: $0, visit: true)
                }
            }
        }
    }

    /// The analytics' open visits (after a restart): each goes on from its counted enter,
    /// whatever the live state says (a clean stop stored every visit begun), and ends as any
    /// other; one whose asset or zone is gone is ended by the counting at the start.
    mutating func resumeCountedVisits(_ open: [ZoneHours.OpenVisit], now: Timestamp) {
        for visit in open {
            guard let a = assetIndex[visit.asset], let z = zones.firstIndex(where: { $0.id == visit.zone }) else {
                continue
            }
            states[a].zones[z].visits.resume(since: min(visit.entered, now), told: true)
            // An asset the saved state did not place (silent at the kill) is given `lostAfter`
            // from the start to be heard, as a restored one is: never heard, its visit is told
            // then, not left open in the counting for ever (issue 61, M6).
            if states[a].lastHeard == nil { states[a].resumedUnheardUntil = now + lostAfter }
        }
    }

    /// After the start's counting (`ZoneRollup.restart`): visits resumed from the saved live
    /// state begin no earlier than their zone's counting has reached, and a visit the history
    /// told already starts afresh (what follows is a new visit, if the evidence says so).
    mutating func anchorRestoredVisits(from floors: [String: Timestamp], closed: [ZoneVisit]) {
        for z in zones.indices {
            guard let floor = floors[zones[z].id] else { continue }
            for a in states.indices { states[a].zones[z].visits.anchor(from: floor) }
        }
        for visit in closed {
            guard let a = assetIndex[visit.asset], let z = zones.firstIndex(where: { $0.id == visit.zone }) else {
                continue
            }
            states[a].zones[z].visits = VisitSmoother()
        }
    }

    /// A tick without a fix: the visits go on without evidence, unless the asset has not been
    /// heard since a start resumed its visits and its time to be heard is up.
    mutating func smoothUnheard(_ a: Int, at t: Timestamp, events: inout [Event]) {
        guard states[a].lastHeard == nil, let due = states[a].resumedUnheardUntil, t >= due else {
            return smoothVisits(a, evidence: false, at: t, events: &events)
        }
        states[a].resumedUnheardUntil = nil
        for z in zones.indices {
            tell(states[a].zones[z].visits.close(at: t, rules: visitRules), a, zone: z, at: t, events: &events)
        }
    }

    /// The end of a replayed trace: every asset's pending crossings and visits decided and
    /// told (`finish`), as a clean stop leaves nothing undecided.
    mutating func finishVisits(at t: Timestamp, events: inout [Event]) {
        for a in states.indices {
            for z in zones.indices {
                let told = states[a].zones[z].finish(at: t)
                let fix = states[a].estimate
                tell(told, a, zone: z, position: fix?.position, level: fix?.level, at: t, events: &events)
                tell(states[a].zones[z].visits.finish(at: t, rules: visitRules), a, zone: z, at: t, events: &events)
            }
        }
        releaseSettled(upTo: Timestamp(nanoseconds: .max))
    }

    /// The zones, in configuration order.
    public var zoneIDs: [String] { zones.map(\.id) }

    /// Per asset, the zones it flaps in now (`zone.flapping`), in configuration order.
    public var flapping: [String: [String]] {
        var out: [String: [String]] = [:]
        for a in states.indices {
            let zonesFlapping = zones.indices.filter { states[a].zones[$0].decision.flappingSince != nil }
            if !zonesFlapping.isEmpty { out[assets[a].id] = zonesFlapping.map { zones[$0].id } }
        }
        return out
    }

    /// Assets inside each zone now (`beacond_zone_occupancy`).
    public var occupancy: [String: Int] {
        var counts: [String: Int] = [:]
        for state in states {
            for z in zones.indices where state.zones[z].inside { counts[zones[z].id, default: 0] += 1 }
        }
        return counts
    }

    /// Keeps a change of membership for the zone analytics, when they are on (SPEC §8).
    mutating func record(_ a: Int, zone z: Int, entered: Bool, at t: Timestamp) {
        hold(ZoneTransition(zone: zones[z].id, asset: assets[a].id, entered: entered, time: t))
    }

    func applies(_ alarm: Int, to a: Int) -> Bool {
        alarms[alarm].assets.map { $0.contains(assets[a].id) } ?? true
    }

    /// What the zone's decisions told: the shared one changes the membership (and the
    /// analytics' live count) and speaks for the alarms at the zone's confirm; each other
    /// decision speaks for its own alarm.
    mutating func tell(
        _ told: ZoneMembership.Told, _ a: Int, zone z: Int, position: Point?, level: Int?, at t: Timestamp,
        events: inout [Event]
    ) {
        for notice in told.shared {
            switch notice {
            case let .changed(inside, crossedAt):
                // At the crossing, unless the analytics have released past it (a confirm longer
                // than their settle time): they store changes in the order of their times.
                let earliest = t - visitRules.settleTime + .milliseconds(1)
                record(a, zone: z, entered: inside, at: max(crossedAt, earliest))
            case .flapping:
                flappingBegun += 1
                flappingNow += 1
            case .settled: flappingNow -= 1
            }
            for alarm in alarmsByZone[z] where zones[z].alarmConfirms[alarm] == nil {
                alert(alarm, a, zone: z, notice, position: position, level: level, at: t, events: &events)
            }
        }
        for (alarm, notices) in told.alarms {
            for notice in notices {
                alert(alarm, a, zone: z, notice, position: position, level: level, at: t, events: &events)
            }
        }
    }

    /// An alarm's enter or exit (at the crossing it confirms), or its flapping notice: for an
    /// active alarm on that change, for that asset. Flapping is told by an alarm on enters or
    /// exits: it speaks in their place.
    func alert(
        _ alarm: Int, _ a: Int, zone z: Int, _ notice: ZoneDecision.Notice, position: Point?, level: Int?,
        at t: Timestamp, events: inout [Event]
    ) {
        guard alarms[alarm].active, applies(alarm, to: a) else { return }
        var zoneAlert = ZoneAlert(
            alarm: alarms[alarm].id, asset: assets[a].id, zone: zones[z].id, condition: .enter, position: position,
            level: level)
        switch notice {
        case let .changed(inside, crossedAt):
            zoneAlert.condition = inside ? .enter : .exit
            zoneAlert.crossedAt = crossedAt
            guard alarms[alarm].on.contains(zoneAlert.condition) else { return }
        case let .flapping(since, changes):
            zoneAlert.condition = .flapping
            zoneAlert.flap = ZoneAlert.Flap(since: since, changes: changes, settled: nil)
            guard !alarms[alarm].on.isDisjoint(with: [.enter, .exit]) else { return }
        case let .settled(since, changes, inside):
            zoneAlert.condition = .flapping
            zoneAlert.flap = ZoneAlert.Flap(since: since, changes: changes, settled: inside)
            guard !alarms[alarm].on.isDisjoint(with: [.enter, .exit]) else { return }
        }
        events.append(Event(time: t, payload: .zone(zoneAlert)))
    }
}
