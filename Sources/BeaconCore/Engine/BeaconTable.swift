/// What the engine knows about each beacon it has heard: its smoothed RSSI per receiver,
/// the regions it matches (cached), and its proximity class.
///
/// Beacons live in slots of one array and are found through one dictionary lookup per
/// sighting; the region match list is computed once per beacon and reused until the set of
/// regions changes, so a sighting never scans regions or beacons.
struct BeaconRecord: Sendable {
    var identity: BeaconIdentity
    /// The frame's own calibration (measured power at 1 m), used when the receiver has none.
    var frameRSSIAt1m: Int?
    var lastSeen: Timestamp
    var readings: [ReceiverReading] = []
    /// Regions this beacon matches, valid while `matchGeneration` equals the engine's.
    var matches: [RegionMatch] = []
    var matchGeneration: UInt32 = .max
    var proximity = ProximityTracker()
    /// The asset whose tag this beacon is, if any (looked up once, when first heard).
    var asset: Int32?
}

extension BeaconRecord {
    /// Reading `i` is the strongest (smoothed) of its readings: its receiver hears it best.
    func hearsBest(_ i: Int) -> Bool {
        let mine = readings[i].filter.estimate
        for j in readings.indices where readings[j].filter.estimate > mine { return false }
        return true
    }

    /// Moves every time it holds with a step of the wall clock (`BeaconEngine.shiftClock`).
    mutating func shift(by d: TimeSpan) {
        lastSeen = lastSeen + d
        for i in readings.indices {
            readings[i].lastSeen = readings[i].lastSeen + d
            readings[i].filter.shift(by: d)
        }
    }
}

/// A region a beacon matches, with its ranging flag copied out so that a sighting does not
/// have to read (and copy) the region to know whether to record the beacon for ranging.
struct RegionMatch: Sendable {
    var slot: Int32
    var ranging: Bool
}

/// A receiver's view of one beacon.
struct ReceiverReading: Sendable {
    var receiver: Int32
    var filter: RSSIFilter
    var lastSeen: Timestamp
}

/// `beacon.proximity` changes are reported only after the new class holds for 2 ranging
/// intervals, so one noisy reading near a 0.5 m or 3 m boundary does not produce two events.
struct ProximityTracker: Sendable {
    static let ticksToHold = 2
    var reported: Proximity = .unknown
    var candidate: Proximity = .unknown
    var candidateTicks = 0

    /// Returns the class to report when a change has held long enough.
    mutating func observe(_ p: Proximity) -> Proximity? {
        if p == reported {
            candidateTicks = 0
            return nil
        }
        if p == candidate {
            candidateTicks += 1
        } else {
            candidate = p
            candidateTicks = 1
        }
        guard candidateTicks >= ProximityTracker.ticksToHold else { return nil }
        reported = p
        candidateTicks = 0
        return p
    }
}
