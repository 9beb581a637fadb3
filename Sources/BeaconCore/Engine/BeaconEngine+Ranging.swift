extension BeaconEngine {
    /// One ranging interval: a `ranging` event per ranging region that has beacons (and one
    /// empty event when its last beacon goes), then proximity changes that held long enough.
    mutating func rangingTick(at t: Timestamp, events: inout [Event]) {
        nextRangingTick = rangingSlots.isEmpty ? nil : t + settings.rangingInterval
        var ranged: Set<Int32> = []
        for regionSlot in rangingSlots {
            guard let members = rangingMembers[regionSlot] else { continue }
            let info = regionInfo[Int(regionSlot)]
            var list: [(slot: Int32, beacon: RangedBeacon)] = []
            for beaconSlot in members {
                guard let record = records[Int(beaconSlot)], t - record.lastSeen <= settings.exitTimeout,
                    case let .ibeacon(id) = record.identity
                else {
                    rangingMembers[regionSlot]!.remove(beaconSlot)
                    continue
                }
                ranged.insert(beaconSlot)
                list.append((beaconSlot, rangedBeacon(id, slot: beaconSlot, at: t)))
            }
            guard !list.isEmpty || rangingNonEmpty.contains(regionSlot) else { continue }
            if list.isEmpty { rangingNonEmpty.remove(regionSlot) } else { rangingNonEmpty.insert(regionSlot) }
            list.sort { a, b in
                switch (a.beacon.distance, b.beacon.distance) {
                case let (x?, y?) where x != y: return x < y
                case (.some, nil): return true
                case (nil, .some): return false
                default: return a.slot < b.slot
                }
            }
            events.append(
                Event(
                    time: t,
                    payload: .ranging(client: info.client, region: info.spec.id, beacons: list.map(\.beacon))))
        }
        for beaconSlot in ranged.sorted() {
            let reading = nearestFreshReading(slot: beaconSlot, at: t)
            let proximity = Proximity(distance: reading?.distance)
            guard let change = records[Int(beaconSlot)]!.proximity.observe(proximity) else { continue }
            events.append(
                Event(
                    time: t,
                    payload: .beaconProximity(
                        beacon: records[Int(beaconSlot)]!.identity, proximity: change,
                        distance: change == .unknown ? nil : reading?.distance)))
        }
    }

    private func rangedBeacon(_ id: IBeaconID, slot: Int32, at t: Timestamp) -> RangedBeacon {
        if let r = nearestFreshReading(slot: slot, at: t) {
            return RangedBeacon(
                beacon: id, rssi: r.rssi, distance: r.distance, proximity: Proximity(distance: r.distance),
                receiver: receiverNames[Int(r.receiver)])
        }
        // Heard within exit_timeout but not recently: listed, with unknown proximity.
        let latest = records[Int(slot)]!.readings.max { $0.lastSeen < $1.lastSeen }!
        return RangedBeacon(
            beacon: id, rssi: latest.filter.estimate, distance: nil, proximity: .unknown,
            receiver: receiverNames[Int(latest.receiver)])
    }

    /// The receiver that puts the beacon nearest, among readings fresher than `rangingFreshness`.
    func nearestFreshReading(slot: Int32, at t: Timestamp) -> (receiver: Int32, rssi: Double, distance: Double?)? {
        var best: (receiver: Int32, rssi: Double, distance: Double?)?
        for r in records[Int(slot)]!.readings where t - r.lastSeen <= BeaconEngine.rangingFreshness {
            let d = distance(slot: slot, receiver: r.receiver, smoothed: r.filter.estimate)
            let candidate = (r.receiver, r.filter.estimate, d)
            guard let current = best else {
                best = candidate
                continue
            }
            let better: Bool
            switch (d, current.distance) {
            case let (x?, y?): better = x < y
            case (.some, nil): better = true
            case (nil, .some): better = false
            case (nil, nil): better = r.filter.estimate > current.rssi
            }
            if better { best = candidate }
        }
        return best
    }
}
