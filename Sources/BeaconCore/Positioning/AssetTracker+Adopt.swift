extension AssetTracker {
    /// Takes over the state of assets that exist in both trackers, by id as a restart does
    /// (`restore`): their readings and belief when the receivers and the tag are the same,
    /// their position, and their membership of zones with the same id and shape (so a reload
    /// raises no second zone.enter). A dwell alert already sent stays sent for an alarm of the
    /// same id and dwell, wherever the alarm now stands in the list. Alarms keep their runtime
    /// flag.
    mutating func adopt(from old: AssetTracker) {
        // The analytics' transitions not yet taken, and whether they are kept, go on.
        (recordsTransitions, transitions, held, heat) = (old.recordsTransitions, old.transitions, old.held, old.heat)
        let sameReceivers = old.receivers == receivers && old.calibrations == calibrations
        // Old alarm index -> new index, for alarms whose dwell alert means the same
        var sameDwell: [Int: Int] = [:]
        for (o, alarm) in old.definition.alarms.enumerated() {
            if let n = definition.alarms.firstIndex(where: { $0.id == alarm.id && $0.dwell == alarm.dwell }) {
                sameDwell[o] = n
            }
        }
        for (a, asset) in assets.enumerated() {
            guard let o = old.assetIndex[asset.id] else { continue }
            let previous = old.states[o]
            let sameTag = old.assets[o].tag == asset.tag
            if sameReceivers && sameTag { states[a].readings = previous.readings }
            if sameReceivers && sameTag && old.definition.positioning == definition.positioning {
                states[a].belief = previous.belief
                states[a].beliefLevel = previous.beliefLevel
                states[a].beliefAt = previous.beliefAt
                // A tag that stands goes on standing where it stood.
                (states[a].anchor, states[a].left) = (previous.anchor, previous.left)
                (states[a].movingSince, states[a].awayTicks) = (previous.movingSince, previous.awayTicks)
                (states[a].settled, states[a].recent) = (previous.settled, previous.recent)
            }
            states[a].lastHeard = previous.lastHeard
            states[a].hold = previous.hold
            states[a].resumedUnheardUntil = previous.resumedUnheardUntil
            states[a].estimate = previous.estimate
            states[a].estimatedAt = previous.estimatedAt
            states[a].published = previous.published
            states[a].publishedAt = previous.publishedAt
            states[a].lost = previous.lost
            // The tag's own state (SPEC §7.2) is the tag's, whatever the reload changed; a
            // new tag starts afresh.
            if sameTag {
                states[a].interval = previous.interval
                states[a].telemetry = previous.telemetry
                states[a].batteryLow = previous.batteryLow
                states[a].batteryBackSince = previous.batteryBackSince
            }
            (states[a].missingSince, states[a].missingLastSeen) = (previous.missingSince, previous.missingLastSeen)
            states[a].heardAgainAt = previous.heardAgainAt
            for (z, zone) in definition.zones.enumerated() {
                guard let oz = old.definition.zones.firstIndex(of: zone) else { continue }
                states[a].zones[z] = previous.zones[oz]
                states[a].zones[z].dwellFired = Set(previous.zones[oz].dwellFired.compactMap { sameDwell[$0] })
                // An alarm's own decision goes on by its id; all follow this configuration's confirms.
                var own: [Int: ZoneDecision] = [:]
                for (o, decision) in previous.zones[oz].alarmDecisions {
                    if let n = alarms.firstIndex(where: { $0.id == old.alarms[o].id }) { own[n] = decision }
                }
                states[a].zones[z].alarmDecisions = own
                states[a].zones[z].reconfigure(for: zones[z])
            }
        }
        flappingBegun = old.flappingBegun
        flappingNow = states.reduce(0) { n, s in n + s.zones.filter { $0.decision.flappingSince != nil }.count }
        for (i, alarm) in alarms.enumerated() {
            if let previous = old.alarms.first(where: { $0.id == alarm.id }),
                old.definition.alarms.first(where: { $0.id == alarm.id })?.active == alarm.active
            {
                alarms[i].active = previous.active
            }
        }
    }
}
