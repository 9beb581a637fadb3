extension AssetTracker {
    /// A reading of asset `asset` by a receiver. Receivers without a known position are
    /// counted (`unplacedReceivers`), not used.
    public mutating func observe(asset: Int, receiver: String, rssi: Int, frameRSSIAt1m: Int?, at t: Timestamp) {
        observe(
            asset: asset, place: receiverIndex[receiver] ?? -1, receiver: receiver, rssi: rssi,
            frameRSSIAt1m: frameRSSIAt1m, at: t)
    }

    /// The same with the receiver's place among the site's (`receiverIndex`, -1 for none)
    /// found already: the engine keeps it in its receiver table, so a sighting costs no
    /// lookup by name here (issue 54).
    mutating func observe(
        asset: Int, place: Int, receiver: String, rssi: Int, frameRSSIAt1m: Int?, at t: Timestamp
    ) {
        guard place >= 0 else {
            if unplacedReceivers[receiver] != nil || unplacedReceivers.count < Self.unplacedLimit {
                unplacedReceivers[receiver, default: 0] += 1
            }
            return
        }
        let r = place
        states[asset].lastHeard = t
        states[asset].hold = nil
        if states[asset].missingSince != nil, states[asset].heardAgainAt == nil { states[asset].heardAgainAt = t }
        if grid != nil { states[asset].heard[r, default: PacketSums()].add(rssi) }
        if var reading = states[asset].readings[r] {
            if states[asset].readings.values.allSatisfy({ $0.filter.estimate <= reading.filter.estimate }) {
                states[asset].interval.add(gap: t - reading.lastSeen)
            }
            reading.filter.update(rssi: rssi, at: t)
            reading.lastSeen = t
            if let power = frameRSSIAt1m { reading.frameRSSIAt1m = Double(power) }
            states[asset].readings[r] = reading
        } else {
            states[asset].readings[r] = Reading(
                filter: RSSIFilter(rssi: rssi, at: t, timeConstant: AssetTracker.rssiTimeConstant), lastSeen: t,
                frameRSSIAt1m: frameRSSIAt1m.map(Double.init))
        }
    }

    /// What one receiver hears of an asset now: its smoothed RSSI and when it last heard it,
    /// with where the receiver is. For calibration (`beaconctl calibrate record`): a reference
    /// tag held at a known spot, read from every receiver at once.
    public struct ReceiverReading: Sendable, Equatable {
        public var receiver: SiteReceiver
        public var rssi: Double
        public var lastSeen: Timestamp
    }

    /// The asset's readings by receiver, strongest first; nil for an asset not configured.
    public func readings(asset id: String) -> [ReceiverReading]? {
        guard let index = assetIndex[id] else { return nil }
        return states[index].readings.map { r, reading in
            ReceiverReading(receiver: receivers[r], rssi: reading.filter.estimate, lastSeen: reading.lastSeen)
        }.sorted { $0.rssi > $1.rssi }
    }
}
