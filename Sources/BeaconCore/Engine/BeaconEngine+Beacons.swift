extension BeaconEngine {
    /// Beacons the engine currently remembers (heard within the retention time).
    public var beaconCount: Int { beaconSlots.count }

    mutating func internReceiver(_ name: String) -> Int32 {
        if let id = receiverIDs[name] { return id }
        let id = Int32(receiverNames.count)
        receiverIDs[name] = id
        receiverNames.append(name)
        receiverCalibration.append(calibrations[name])
        return id
    }

    mutating func beaconSlot(for identity: BeaconIdentity, frame: BeaconFrame, at t: Timestamp) -> Int32 {
        if let slot = beaconSlots[identity] {
            records[Int(slot)]!.lastSeen = t
            if let power = frame.rssiAt1m { records[Int(slot)]!.frameRSSIAt1m = power }
            return slot
        }
        let record = BeaconRecord(identity: identity, frameRSSIAt1m: frame.rssiAt1m, lastSeen: t)
        let slot: Int32
        if let free = freeBeaconSlots.popLast() {
            slot = free
            records[Int(slot)] = record
        } else {
            slot = Int32(records.count)
            records.append(record)
        }
        beaconSlots[identity] = slot
        return slot
    }

    /// Updates the beacon's filter for this receiver and returns the smoothed RSSI.
    mutating func updateReading(slot: Int32, receiver: Int32, rssi: Int, at t: Timestamp) -> Double {
        let s = Int(slot)
        if let i = records[s]!.readings.firstIndex(where: { $0.receiver == receiver }) {
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
        guard let reference = calibration?.rssiAt1m ?? records[Int(slot)]!.frameRSSIAt1m else { return nil }
        return PathLoss.distance(rssi: smoothed, rssiAt1m: reference, exponent: calibration?.pathLossExponent ?? 2.0)
    }

    /// The regions an iBeacon/AltBeacon identity matches: three index lookups, done once per
    /// beacon until the set of regions changes.
    mutating func refreshMatches(slot: Int32, id: IBeaconID) {
        var slots: [Int32] = []
        let keys = [
            RegionKey(uuid: id.uuid, major: -1, minor: -1), RegionKey(uuid: id.uuid, major: Int32(id.major), minor: -1),
            RegionKey(uuid: id.uuid, major: Int32(id.major), minor: Int32(id.minor)),
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
            let slot = Int32(s)
            for (regionSlot, _) in rangingMembers { rangingMembers[regionSlot]!.remove(slot) }
            beaconSlots[record.identity] = nil
            records[s] = nil
            freeBeaconSlots.append(slot)
        }
    }
}
