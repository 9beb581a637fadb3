/// The outcome of registering a region: the events it caused and, if refused, why.
public struct RegionChange: Sendable, Equatable {
    public var events: [Event]
    public var failure: RegionFailure?

    public init(events: [Event], failure: RegionFailure?) {
        self.events = events
        self.failure = failure
    }
}

/// A monitored region as the API lists it.
public struct RegionStatus: Sendable, Equatable {
    public var client: String
    public var spec: RegionSpec
    public var state: RegionState
    public var enteredAt: Timestamp?

    public init(client: String, spec: RegionSpec, state: RegionState, enteredAt: Timestamp?) {
        self.client = client
        self.spec = spec
        self.state = state
        self.enteredAt = enteredAt
    }
}

extension BeaconEngine {
    /// Starts monitoring `region` for `client` (SPEC §3). An id the client already has is
    /// replaced and starts again from `unknown`. A new id beyond `region_limit` is refused
    /// with `region.failed` (`region_limit_exceeded`) and changes nothing else.
    public mutating func monitor(client: String, region: RegionSpec, at t: Timestamp) -> RegionChange {
        var events = advance(to: t)
        let time = now
        var regionsOfClient = clients[client] ?? ClientRegions()
        if let existing = regionsOfClient.slots[region.id] {
            removeRegion(slot: existing)
        } else if regionsOfClient.order.count >= settings.regionLimit {
            events.append(
                Event(
                    time: time, payload: .regionFailed(client: client, region: region.id, reason: .regionLimitExceeded))
            )
            return RegionChange(events: events, failure: .regionLimitExceeded)
        } else {
            regionsOfClient.order.append(region.id)
        }
        if clients[client] == nil { clientOrder.append(client) }
        let monitor = RegionMonitor(dwell: region.dwell, startedAt: time, enterSightings: settings.enterSightings)
        let info = RegionInfo(client: client, spec: region)
        let slot: Int32
        if let free = freeRegionSlots.popLast() {
            slot = free
            regions[Int(slot)] = monitor
            regionInfo[Int(slot)] = info
            regionPatience[Int(slot)] = .milliseconds(0)
        } else {
            slot = Int32(regions.count)
            regions.append(monitor)
            regionInfo.append(info)
            regionPatience.append(.milliseconds(0))
            generations.append(0)
        }
        regionsOfClient.slots[region.id] = slot
        clients[client] = regionsOfClient
        index[key(of: region), default: []].append(slot)
        indexGeneration &+= 1
        if region.ranging {
            rangingMembers[slot] = []
            rangingSlots.append(slot)
            if nextRangingTick == nil { nextRangingTick = time + settings.rangingInterval }
        }
        arm(slot)
        return RegionChange(events: events, failure: nil)
    }

    /// Stops monitoring; no event. Returns false when the client has no such region.
    @discardableResult
    public mutating func stopMonitoring(client: String, region id: String) -> Bool {
        guard var regionsOfClient = clients[client], let slot = regionsOfClient.slots[id] else { return false }
        removeRegion(slot: slot)
        regionsOfClient.slots[id] = nil
        regionsOfClient.order.removeAll { $0 == id }
        clients[client] = regionsOfClient
        return true
    }

    /// CoreLocation's `requestState(for:)`: a `region.state` with the current state, now.
    public mutating func requestState(client: String, region id: String, at t: Timestamp) -> RegionChange {
        var events = advance(to: t)
        guard let slot = clients[client]?.slots[id] else {
            return RegionChange(events: events, failure: .regionNotFound)
        }
        events.append(
            Event(
                time: now,
                payload: .regionState(client: client, region: id, state: regions[Int(slot)].state)))
        return RegionChange(events: events, failure: nil)
    }

    /// Clients in registration order.
    public var clientIDs: [String] { clientOrder }

    /// A client's regions in registration order, with their state.
    public func regionStatuses(client: String) -> [RegionStatus] {
        guard let c = clients[client] else { return [] }
        return c.order.compactMap { id in
            guard let slot = c.slots[id] else { return nil }
            let m = regions[Int(slot)]
            return RegionStatus(
                client: client, spec: regionInfo[Int(slot)].spec, state: m.state,
                enteredAt: m.state == .inside ? m.enteredAt : nil)
        }
    }

    private func key(of region: RegionSpec) -> RegionIndexKey {
        RegionIndexKey(uuid: region.uuid, major: region.major, minor: region.minor)
    }

    private mutating func removeRegion(slot: Int32) {
        let k = key(of: regionInfo[Int(slot)].spec)
        index[k]?.removeAll { $0 == slot }
        if index[k]?.isEmpty == true { index[k] = nil }
        indexGeneration &+= 1
        if rangingMembers.removeValue(forKey: slot) != nil {
            rangingSlots.removeAll { $0 == slot }
            rangingNonEmpty.remove(slot)
            if rangingSlots.isEmpty { nextRangingTick = nil }
        }
        generations[Int(slot)] &+= 1
        freeRegionSlots.append(slot)
    }

    /// Puts the region's deadline in the heap unless an earlier entry is already there.
    /// The settings a region's timers run on: its exit waits `exit_timeout`, or three of its
    /// beacon's intervals when that is longer (SPEC §7.3).
    func settings(forRegion slot: Int32) -> MonitoringSettings {
        let patience = regionPatience[Int(slot)]
        guard patience > settings.exitTimeout else { return settings }
        var paced = settings
        paced.exitTimeout = patience
        return paced
    }

    mutating func arm(_ slot: Int32) {
        guard let due = regions[Int(slot)].deadline(settings(forRegion: slot)) else { return }
        if let armed = regions[Int(slot)].armedAt, armed <= due { return }
        regions[Int(slot)].armedAt = due
        timers.push(TimerHeap.Entry(due: due, slot: slot, generation: generations[Int(slot)]))
    }

    mutating func fireRegionTimer(_ entry: TimerHeap.Entry, events: inout [Event]) {
        let s = Int(entry.slot)
        guard generations[s] == entry.generation, regions[s].armedAt == entry.due else { return }
        regions[s].armedAt = nil
        var transitions: [RegionTransition] = []
        regions[s].fire(at: entry.due, settings: settings(forRegion: entry.slot), into: &transitions)
        for transition in transitions { appendEvent(for: transition, slot: entry.slot, to: &events) }
        arm(entry.slot)
    }

    /// The event for a timer or determination transition, unless the region asked for none.
    mutating func appendEvent(for transition: RegionTransition, slot: Int32, to events: inout [Event]) {
        let info = regionInfo[Int(slot)]
        let c = info.client
        let r = info.spec.id
        switch transition {
        case let .determined(state, t):
            events.append(Event(time: t, payload: .regionState(client: c, region: r, state: state)))
        case .entered:
            return  // built by observe(), which has the sighting that caused it
        case let .exited(t, lastSeen, duration):
            guard info.spec.notifyOnExit else { return }
            events.append(
                Event(time: t, payload: .regionExit(client: c, region: r, lastSeen: lastSeen, duration: duration)))
        case let .dwelled(dwell, t):
            events.append(Event(time: t, payload: .regionDwell(client: c, region: r, dwell: dwell)))
        }
    }
}
