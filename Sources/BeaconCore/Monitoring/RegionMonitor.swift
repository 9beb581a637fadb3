/// The state machine of one monitored region: CoreLocation's semantics, made exact (SPEC §3).
///
/// It never looks at a clock. `sighted` is called for each matching sighting and
/// `fire(at:)` when `deadline` is reached; both return the events to publish.
/// The deadline only ever moves later on a sighting while inside, which lets the engine
/// keep timers lazily: a sighting costs no heap operation.
struct RegionMonitor: Sendable {
    let client: String
    var spec: RegionSpec
    private(set) var state: RegionState = .unknown
    /// When monitoring started: the unknown state resolves to outside `exitTimeout` after it.
    let startedAt: Timestamp
    /// Times of the latest qualifying sightings while not inside (a ring of `enterSightings`).
    private var recent: [Timestamp]
    private var recentCount = 0
    private var recentHead = 0
    /// Latest sighting at or above `minRSSI` (unknown state) or `keepInsideRSSI` (inside).
    private(set) var lastSeen: Timestamp?
    private(set) var enteredAt: Timestamp?
    private var nextDwellIndex = 0
    /// The earliest deadline this region has in the engine's timer heap, if any.
    var armedAt: Timestamp?

    init(client: String, spec: RegionSpec, startedAt: Timestamp, enterSightings: Int) {
        self.client = client
        self.spec = spec
        self.startedAt = startedAt
        self.recent = [Timestamp](repeating: startedAt, count: max(1, enterSightings))
    }

    /// When `fire` must next be called, or nil when only a sighting can change the state.
    func deadline(_ settings: MonitoringSettings) -> Timestamp? {
        switch state {
        case .unknown:
            return (lastSeen ?? startedAt) + settings.exitTimeout
        case .inside:
            let exitAt = (lastSeen ?? startedAt) + settings.exitTimeout
            guard nextDwellIndex < spec.dwell.count, let entered = enteredAt else { return exitAt }
            return min(exitAt, entered + spec.dwell[nextDwellIndex])
        case .outside:
            return nil
        }
    }

    /// A sighting of a matching beacon. Returns true when it changed the state
    /// (so the engine re-arms the timer), appending any events to `events`.
    mutating func sighted(
        at t: Timestamp, rssi: Int, beacon: IBeaconID, receiver: String, distance: Double?,
        settings: MonitoringSettings, events: inout [Event]
    ) -> Bool {
        switch state {
        case .inside:
            if rssi >= settings.keepInsideRSSI { lastSeen = t }
            return false
        case .unknown, .outside:
            guard rssi >= settings.minRSSI else { return false }
            if state == .unknown { lastSeen = t }
            guard record(t, settings) else { return false }
            let wasUnknown = state == .unknown
            state = .inside
            enteredAt = t
            lastSeen = t
            nextDwellIndex = 0
            recentCount = 0
            if wasUnknown {
                events.append(Event(time: t, payload: .regionState(client: client, region: spec.id, state: .inside)))
            } else if spec.notifyOnEntry {
                events.append(
                    Event(
                        time: t,
                        payload: .regionEnter(
                            client: client, region: spec.id, beacon: beacon, receiver: receiver, rssi: rssi,
                            distance: distance)))
            }
            return true
        }
    }

    /// Records a qualifying sighting; true when `enterSightings` of them fall within `enterWindow`.
    /// Sightings at the same instant (one packet heard by two receivers) count once.
    private mutating func record(_ t: Timestamp, _ settings: MonitoringSettings) -> Bool {
        let capacity = recent.count
        if recentCount > 0 {
            let newest = recent[(recentHead + recentCount - 1) % capacity]
            if t <= newest { return false }
        }
        if recentCount == capacity {
            recent[recentHead] = t
            recentHead = (recentHead + 1) % capacity
        } else {
            recent[(recentHead + recentCount) % capacity] = t
            recentCount += 1
        }
        guard recentCount == capacity else { return false }
        return t - recent[recentHead] <= settings.enterWindow
    }

    /// Fires what is due at `now` (the deadline, or later), in time order, each event at its
    /// own due time. Dwell before exit when both fall on the same instant.
    mutating func fire(at now: Timestamp, settings: MonitoringSettings, events: inout [Event]) {
        while let due = deadline(settings), due <= now {
            switch state {
            case .unknown:
                state = .outside
                lastSeen = nil
                recentCount = 0
                events.append(Event(time: due, payload: .regionState(client: client, region: spec.id, state: .outside)))
            case .inside:
                let entered = enteredAt ?? startedAt
                if nextDwellIndex < spec.dwell.count, entered + spec.dwell[nextDwellIndex] == due {
                    let dwell = spec.dwell[nextDwellIndex]
                    nextDwellIndex += 1
                    events.append(Event(time: due, payload: .regionDwell(client: client, region: spec.id, dwell: dwell)))
                    continue
                }
                let last = lastSeen ?? entered
                state = .outside
                enteredAt = nil
                lastSeen = nil
                recentCount = 0
                if spec.notifyOnExit {
                    events.append(
                        Event(
                            time: due,
                            payload: .regionExit(client: client, region: spec.id, lastSeen: last, duration: last - entered)))
                }
            case .outside:
                return
            }
        }
    }

    func stateEvent(at t: Timestamp) -> Event {
        Event(time: t, payload: .regionState(client: client, region: spec.id, state: state))
    }
}
