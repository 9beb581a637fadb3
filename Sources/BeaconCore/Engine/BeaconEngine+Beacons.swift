extension BeaconEngine {
    /// Beacons the engine currently remembers (heard within the retention time).
    public var beaconCount: Int { beaconSlots.count }

    /// The engine's number for the sighting's receiver: an array read for an interned name.
    @inline(__always)
    mutating func internReceiver(_ sighting: Sighting) -> Int32 {
        let index = Int(sighting.receiverID.index)
        if index < slotOfReceiverID.count, slotOfReceiverID[index] >= 0 { return slotOfReceiverID[index] }
        let slot = internReceiver(sighting.receiver)
        if sighting.receiverID != .unlisted {
            if index >= slotOfReceiverID.count {
                slotOfReceiverID.append(contentsOf: repeatElement(-1, count: index + 1 - slotOfReceiverID.count))
            }
            slotOfReceiverID[index] = slot
        }
        return slot
    }

    /// Whether the sighting's receiver already has a number here.
    func knowsReceiver(_ sighting: Sighting) -> Bool {
        let index = Int(sighting.receiverID.index)
        if index < slotOfReceiverID.count, slotOfReceiverID[index] >= 0 { return true }
        return receiverIDs[sighting.receiver] != nil
    }

    mutating func internReceiver(_ name: String) -> Int32 {
        if let id = receiverIDs[name] { return id }
        let id = Int32(receiverNames.count)
        receiverIDs[name] = id
        receiverNames.append(name)
        receiverCalibration.append(calibrations[name])
        receiverHeard.append(ReceiverTally(sightings: 0, lastHeard: Timestamp(nanoseconds: 0)))
        receiverPlace.append(tracker?.receiverIndex[name] ?? -1)
        if !configuredReceivers.contains(name) { unconfiguredReceivers += 1 }
        return id
    }

    /// Every receiver the configuration names: with a position, or a calibration.
    static func named(_ site: SiteConfiguration, _ calibrations: [String: ReceiverCalibration]) -> Set<String> {
        Set(site.receivers.map(\.id)).union(calibrations.keys)
    }

    mutating func beaconSlot(for identity: BeaconIdentity, frame: BeaconFrame, at t: Timestamp) -> Int32 {
        let key = BeaconKey(identity)
        if let slot = beaconSlots.find(key, in: records) {
            records[Int(slot)]!.lastSeen = t
            if let power = frame.rssiAt1m { records[Int(slot)]!.frameRSSIAt1m = power }
            return slot
        }
        if beaconSlots.count >= beaconLimit { evictStalest() }
        var record = BeaconRecord(identity: identity, frameRSSIAt1m: frame.rssiAt1m, lastSeen: t)
        record.asset = tracker?.asset(identity: identity).map(Int32.init)
        let slot: Int32
        if let free = freeBeaconSlots.popLast() {
            slot = free
            records[Int(slot)] = record
            intervals[Int(slot)] = AdvertisingInterval()
        } else {
            slot = Int32(records.count)
            records.append(record)
            intervals.append(AdvertisingInterval())
        }
        beaconSlots.insert(key, slot: slot, in: records)
        return slot
    }

    /// Updates the beacon's filter for this receiver and returns the smoothed RSSI. The gap
    /// since this receiver last heard it teaches the beacon's interval when this receiver is
    /// the one that hears it best.
    mutating func updateReading(slot: Int32, receiver: Int32, rssi: Int, at t: Timestamp) -> Double {
        let s = Int(slot)
        if let i = records[s]!.readings.firstIndex(where: { $0.receiver == receiver }) {
            if records[s]!.hearsBest(i) { intervals[s].add(gap: t - records[s]!.readings[i].lastSeen) }
            records[s]!.readings[i].filter.update(rssi: rssi, at: t)
            records[s]!.readings[i].lastSeen = t
            return records[s]!.readings[i].filter.estimate
        }
        records[s]!.readings.append(
            ReceiverReading(receiver: receiver, filter: RSSIFilter(rssi: rssi, at: t), lastSeen: t))
        return Double(rssi)
    }

    /// SPEC §3 distance with the receiver's calibration, else the beacon's measured power.
    func distance(slot: Int32, receiver: Int32, smoothed: Double) -> Double? {
        let calibration = receiverCalibration[Int(receiver)]
        guard let reference = calibration?.rssiAt1m ?? records[Int(slot)]!.frameRSSIAt1m.map(Double.init) else {
            return nil
        }
        return PathLoss.distance(rssi: smoothed, rssiAt1m: reference, exponent: calibration?.pathLossExponent ?? 2.0)
    }

    /// The regions an iBeacon/AltBeacon identity matches: three index lookups, done once per
    /// beacon until the set of regions changes.
    mutating func refreshMatches(slot: Int32, id: IBeaconID) {
        var slots: [Int32] = []
        let keys = [
            RegionIndexKey(uuid: id.uuid, major: nil, minor: nil),
            RegionIndexKey(uuid: id.uuid, major: id.major, minor: nil),
            RegionIndexKey(uuid: id.uuid, major: id.major, minor: id.minor),
        ]
        for key in keys { slots += index[key] ?? [] }
        slots.sort()
        records[Int(slot)]!.matches = slots.map { RegionMatch(slot: $0, ranging: rangingMembers[$0] != nil) }
        records[Int(slot)]!.matchGeneration = indexGeneration
    }

    /// Forgets beacons not heard for a long time, so rotating or passing beacons cannot grow
    /// memory without bound. Emits nothing: region exits come from region timers.
    mutating func sweep(at t: Timestamp) {
        nextSweep = t + BeaconEngine.sweepInterval
        let retention = max(BeaconEngine.beaconRetention, settings.exitTimeout * 2)
        for s in records.indices {
            guard let record = records[s], t - record.lastSeen > retention else { continue }
            forget(slot: Int32(s))
        }
    }

    /// The table is full: forgets the stalest tenth at once, so a flood costs one sort per
    /// `beaconLimit / 10` new beacons rather than a scan per beacon. Regions are untouched
    /// (their states and timers are their own); a forgotten beacon heard again starts afresh.
    mutating func evictStalest() {
        var heard: [(lastSeen: Timestamp, slot: Int32)] = []
        heard.reserveCapacity(beaconSlots.count)
        for (s, record) in records.enumerated() {
            if let record { heard.append((record.lastSeen, Int32(s))) }
        }
        heard.sort { $0.lastSeen < $1.lastSeen }
        for entry in heard.prefix(max(1, beaconLimit / 10)) {
            forget(slot: entry.slot)
            counters.beaconsEvicted += 1
        }
    }

    private mutating func forget(slot: Int32) {
        guard let record = records[Int(slot)] else { return }
        for (regionSlot, _) in rangingMembers { rangingMembers[regionSlot]!.remove(slot) }
        beaconSlots.remove(BeaconKey(record.identity), in: records)
        records[Int(slot)] = nil
        freeBeaconSlots.append(slot)
    }
}

/// A beacon as `GET /v1/beacons` shows it: what each receiver hears of it, smoothed.
public struct BeaconStatus: Sendable, Equatable {
    public struct Reading: Sendable, Equatable {
        public var receiver: String
        public var rssi: Double
        public var distance: Double?
        public var lastSeen: Timestamp
    }

    public var identity: BeaconIdentity
    public var lastSeen: Timestamp
    /// Nearest first.
    public var readings: [Reading]
    /// From the nearest fresh reading; unknown when none is fresh.
    public var proximity: Proximity
    public var distance: Double?
}

extension BeaconEngine {
    /// Beacons heard within `within` of `t`, most recently heard first: how many there are,
    /// and those from `offset` on, at most `limit` (only those are built).
    public func beaconStatuses(at t: Timestamp, within: TimeSpan, offset: Int = 0, limit: Int = .max)
        -> (total: Int, page: [BeaconStatus])
    {
        var heard: [(lastSeen: Timestamp, slot: Int32)] = []
        for (s, record) in records.enumerated() {
            guard let record, t - record.lastSeen <= within else { continue }
            heard.append((record.lastSeen, Int32(s)))
        }
        heard.sort { ($0.lastSeen, $1.slot) > ($1.lastSeen, $0.slot) }
        let page = heard.dropFirst(max(0, offset)).prefix(max(0, limit))
        return (heard.count, page.map { status(slot: $0.slot, at: t) })
    }

    private func status(slot: Int32, at t: Timestamp) -> BeaconStatus {
        let record = records[Int(slot)]!
        let readings = record.readings.map { r in
            BeaconStatus.Reading(
                receiver: receiverNames[Int(r.receiver)], rssi: r.filter.estimate,
                distance: distance(slot: slot, receiver: r.receiver, smoothed: r.filter.estimate),
                lastSeen: r.lastSeen)
        }.sorted { ($0.distance ?? .infinity, -$0.rssi) < ($1.distance ?? .infinity, -$1.rssi) }
        let nearest = nearestFreshReading(slot: slot, at: t)
        return BeaconStatus(
            identity: record.identity, lastSeen: record.lastSeen, readings: readings,
            proximity: Proximity(distance: nearest?.distance), distance: nearest?.distance)
    }
}
