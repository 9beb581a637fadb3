/// What must survive a restart of one region (SPEC §3: "State survives a restart").
///
/// After `systemctl restart`, a region that stayed inside must give no second enter, and one
/// whose beacons left during the downtime must exit `exit_timeout` after its last sighting —
/// at that past time, not at start-up. The store saves these; the engine restores them.
public struct RegionSnapshot: Sendable, Equatable {
    public var client: String
    /// The region as it was monitored. A snapshot is restored only onto an identical
    /// definition: a region whose definition changed starts again from `unknown`.
    public var spec: RegionSpec
    public var state: RegionState
    public var lastSeen: Timestamp
    public var enteredAt: Timestamp
    /// How many of the region's dwell alerts this visit has already fired.
    public var dwellsFired: Int

    public init(
        client: String, spec: RegionSpec, state: RegionState, lastSeen: Timestamp, enteredAt: Timestamp,
        dwellsFired: Int
    ) {
        self.client = client
        self.spec = spec
        self.state = state
        self.lastSeen = lastSeen
        self.enteredAt = enteredAt
        self.dwellsFired = dwellsFired
    }
}

extension BeaconEngine {
    /// Every monitored region's state, clients and regions in registration order.
    public func snapshot() -> [RegionSnapshot] {
        clientOrder.flatMap { client -> [RegionSnapshot] in
            guard let c = clients[client] else { return [] }
            return c.order.compactMap { id in
                guard let slot = c.slots[id] else { return nil }
                let m = regions[Int(slot)]
                return RegionSnapshot(
                    client: client, spec: regionInfo[Int(slot)].spec, state: m.state, lastSeen: m.lastSeen,
                    enteredAt: m.enteredAt, dwellsFired: m.dwellsFired)
            }
        }
    }

    /// Puts a saved state back onto the client's region of the same id and definition.
    /// Returns false (and changes nothing) when there is no such region or it was redefined.
    /// An `unknown` snapshot restores nothing: the region determines its state afresh.
    ///
    /// Times saved later than the engine's clock mean this gateway's clock is behind the one
    /// that saved them (a boot without a battery-backed clock, hours behind after a power
    /// cut): they are taken as now. Kept as they are, the exit of a region whose beacons left
    /// would wait for the clock to reach the saved time, and a later step of the clock to the
    /// right time (`shiftClock`) would push it back by the whole step.
    @discardableResult
    public mutating func restore(_ snapshot: RegionSnapshot) -> Bool {
        guard let slot = clients[snapshot.client]?.slots[snapshot.spec.id], regionInfo[Int(slot)].spec == snapshot.spec
        else { return false }
        guard snapshot.state != .unknown else { return true }
        regions[Int(slot)].restore(
            state: snapshot.state, lastSeen: min(snapshot.lastSeen, now), enteredAt: min(snapshot.enteredAt, now),
            dwellsFired: snapshot.dwellsFired, holdUntil: now + settings.exitTimeout)
        arm(slot)
        return true
    }
}
