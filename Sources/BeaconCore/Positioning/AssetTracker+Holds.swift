/// What an asset's times do when the clock steps or the radios go blind (see
/// `BeaconEngine.shiftClock` and `BeaconEngine.setBlind`).
extension AssetTracker {
    /// Moves every time it holds with a step of the wall clock (`BeaconEngine.shiftClock`).
    mutating func shift(by d: TimeSpan) {
        func moved(_ t: Timestamp?) -> Timestamp? { t.map { $0 + d } }
        for a in states.indices {
            for r in states[a].readings.keys {
                states[a].readings[r]!.lastSeen = states[a].readings[r]!.lastSeen + d
                states[a].readings[r]!.filter.shift(by: d)
            }
            states[a].lastHeard = moved(states[a].lastHeard)
            states[a].estimatedAt = moved(states[a].estimatedAt)
            states[a].publishedAt = moved(states[a].publishedAt)
            states[a].beliefAt = moved(states[a].beliefAt)
            states[a].hold = states[a].hold?.shifted(by: d)
            for z in states[a].zones.indices { states[a].zones[z].shift(by: d) }
        }
        // A visit's held enter moves with its smoother's, so that the visit the analytics
        // count is the one `zone.visit` tells.
        for i in held.indices { held[i].time = held[i].time + d }
    }

    /// While blind, an asset in zones is not lost; when the radios hear again it gets
    /// `lostAfter` to be heard.
    mutating func setBlind(_ blind: Bool, at t: Timestamp) {
        for a in states.indices where states[a].zones.contains(where: \.inside) {
            if blind {
                states[a].hold = .whileBlind
            } else {
                states[a].hold = states[a].hold?.released(at: t, grace: lostAfter)
            }
        }
    }
}
