extension AssetTracker {
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
