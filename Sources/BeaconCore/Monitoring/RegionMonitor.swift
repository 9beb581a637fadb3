/// The state machine of one monitored region: CoreLocation's semantics, made exact (SPEC §3).
///
/// It never looks at a clock: `sighted` is called for each matching sighting and `fire(at:)`
/// when `deadline` is reached, and both report transitions that the engine turns into events.
/// It holds only what a sighting touches (the region's id, client and flags live apart), so
/// the common case — a beacon heard again while inside — reads and writes one small value.
/// That deadline only moves later on such a sighting, which lets the engine keep timers
/// lazily: a sighting costs no heap operation.
struct RegionMonitor: Sendable {
    private(set) var state: RegionState = .unknown
    /// Latest sighting at or above `minRSSI` (unknown state) or `keepInsideRSSI` (inside);
    /// `startedAt` until there is one.
    private(set) var lastSeen: Timestamp
    /// Start of the current visit; meaningful only inside.
    private(set) var enteredAt: Timestamp
    /// The earliest deadline this region has in the engine's timer heap, if any.
    var armedAt: Timestamp?
    /// After a restart, or once the gateway's blind radios hear again, a region inside waits
    /// until here for its beacons to be heard before it exits (dated, if they are not,
    /// `exitTimeout` after its last sighting).
    /// Without it a reboot longer than `exitTimeout` (a power cut, a gateway that takes a
    /// minute to boot) would exit every region whose beacons never left, and enter it again
    /// at their next packet.
    private(set) var hold: ExitHold?
    private var nextDwellIndex: Int32 = 0
    private var recentCount: Int32 = 0
    private var recentHead: Int32 = 0
    /// When monitoring started: the unknown state resolves to outside `exitTimeout` after it.
    private(set) var startedAt: Timestamp
    /// Times of the latest qualifying sightings while not inside (a ring of `enterSightings`).
    private var recent: [Timestamp]
    /// The region's dwell alerts, ascending.
    private let dwell: [TimeSpan]

    init(dwell: [TimeSpan], startedAt: Timestamp, enterSightings: Int) {
        self.dwell = dwell
        self.startedAt = startedAt
        self.lastSeen = startedAt
        self.enteredAt = startedAt
        self.recent = [Timestamp](repeating: startedAt, count: max(1, enterSightings))
    }

    var dwellsFired: Int { Int(nextDwellIndex) }

    /// Moves every time it holds with a step of the wall clock (`BeaconEngine.shiftClock`).
    mutating func shift(by d: TimeSpan) {
        lastSeen = lastSeen + d
        enteredAt = enteredAt + d
        armedAt = armedAt.map { $0 + d }
        hold = hold?.shifted(by: d)
        startedAt = startedAt + d
        for i in recent.indices { recent[i] = recent[i] + d }
    }

    /// Takes back a state saved before a restart. Dwell alerts already fired stay fired; an
    /// exit waits for `holdUntil` (see `hold`).
    mutating func restore(
        state: RegionState, lastSeen: Timestamp, enteredAt: Timestamp, dwellsFired: Int, holdUntil: Timestamp?
    ) {
        self.state = state
        self.hold = state == .inside ? holdUntil.map(ExitHold.until) : nil
        self.lastSeen = lastSeen
        self.enteredAt = enteredAt
        self.nextDwellIndex = Int32(max(0, min(dwellsFired, dwell.count)))
        self.recentCount = 0
        self.armedAt = nil
    }

    /// The gateway's radios went blind: an inside region cannot exit until they hear again.
    mutating func holdWhileBlind() {
        if state == .inside { hold = .whileBlind }
    }

    /// They hear again at `t`: the region's beacons get `exitTimeout` to be heard before it
    /// exits, as after a restart.
    mutating func releaseBlindHold(at t: Timestamp, _ settings: MonitoringSettings) {
        hold = hold?.released(at: t, grace: settings.exitTimeout)
    }

    /// When `fire` must next be called, or nil when only a sighting can change the state.
    func deadline(_ settings: MonitoringSettings) -> Timestamp? {
        switch state {
        case .unknown:
            return lastSeen + settings.exitTimeout
        case .inside:
            let exitAt = lastSeen + settings.exitTimeout
            // Held: not before the hold's time, and not at all while blind
            let exitDue: Timestamp? =
                switch hold {
                case let .until(until)?: max(exitAt, until)
                case .whileBlind?: nil
                case nil: exitAt
                }
            guard Int(nextDwellIndex) < dwell.count else { return exitDue }
            let dwellAt = enteredAt + dwell[Int(nextDwellIndex)]
            // While held, a dwell after the exit's own time waits to know whether there was one
            if hold != nil, dwellAt > exitAt { return exitDue }
            return exitDue.map { min($0, dwellAt) } ?? dwellAt
        case .outside:
            return nil
        }
    }

    /// A sighting of a matching beacon, taken at `t` (the engine's time) and heard at `heard`
    /// (its own time: earlier for a relay's record that arrives a little late). The debounce
    /// counts sightings by when they were heard, so a relay's batch of records a second apart
    /// counts as that many sightings, not as one taken at the instant the batch arrived.
    /// Returns the transition it caused, if any.
    mutating func sighted(
        at t: Timestamp, heard: Timestamp? = nil, rssi: Int, settings: MonitoringSettings
    ) -> RegionTransition? {
        switch state {
        case .inside:
            if rssi >= settings.keepInsideRSSI {
                lastSeen = t
                hold = nil
            }
            return nil
        case .unknown, .outside:
            guard rssi >= settings.minRSSI else { return nil }
            if state == .unknown { lastSeen = t }
            guard record(min(heard ?? t, t), settings) else { return nil }
            let wasUnknown = state == .unknown
            state = .inside
            enteredAt = t
            lastSeen = t
            nextDwellIndex = 0
            recentCount = 0
            return wasUnknown ? .determined(.inside, at: t) : .entered(at: t)
        }
    }

    /// Keeps the latest sightings that fit a new `enter_sightings` (a reload), oldest first, so
    /// that a region part of the way to an enter counts on from what it has heard.
    mutating func resizeSightingMemory(to enterSightings: Int) {
        let capacity = max(1, enterSightings)
        let heard = (0..<recentCount).map { recent[Int((recentHead + $0) % Int32(recent.count))] }.suffix(capacity)
        recent = [Timestamp](repeating: startedAt, count: capacity)
        recent.replaceSubrange(0..<heard.count, with: heard)
        recentHead = 0
        recentCount = Int32(heard.count)
    }

    /// Records a qualifying sighting heard at `t`; true when `enterSightings` of them fall
    /// within `enterWindow`. Sightings at the same instant (one packet heard by two receivers)
    /// count once. One heard before the newest recorded (a relay's record arriving after a
    /// local one) takes its place in time order; when it is older than all the ring keeps,
    /// it does not count.
    private mutating func record(_ t: Timestamp, _ settings: MonitoringSettings) -> Bool {
        let capacity = Int32(recent.count)
        let newest = recentCount > 0 ? recent[Int((recentHead + recentCount - 1) % capacity)] : nil
        if let newest, t <= newest {
            var kept = (0..<recentCount).map { recent[Int((recentHead + $0) % capacity)] }
            guard !kept.contains(t) else { return false }
            kept.insert(t, at: kept.firstIndex { $0 > t } ?? kept.count)
            if kept.count > Int(capacity) { kept.removeFirst() }
            guard kept.contains(t) else { return false }
            recent.replaceSubrange(0..<kept.count, with: kept)
            recentHead = 0
            recentCount = Int32(kept.count)
        } else if recentCount == capacity {
            recent[Int(recentHead)] = t
            recentHead = (recentHead + 1) % capacity
        } else {
            recent[Int((recentHead + recentCount) % capacity)] = t
            recentCount += 1
        }
        guard recentCount == capacity else { return false }
        let oldest = recent[Int(recentHead)]
        let last = recent[Int((recentHead + recentCount - 1) % capacity)]
        return last - oldest <= settings.enterWindow
    }

    /// Fires what is due at `now` (the deadline, or later), in time order, each at its own
    /// due time. Dwell before exit when both fall on the same instant.
    mutating func fire(at now: Timestamp, settings: MonitoringSettings, into transitions: inout [RegionTransition]) {
        while let due = deadline(settings), due <= now {
            switch state {
            case .unknown:
                state = .outside
                recentCount = 0
                transitions.append(.determined(.outside, at: due))
            case .inside:
                if Int(nextDwellIndex) < dwell.count, enteredAt + dwell[Int(nextDwellIndex)] == due {
                    transitions.append(.dwelled(dwell[Int(nextDwellIndex)], at: due))
                    nextDwellIndex += 1
                    continue
                }
                state = .outside
                recentCount = 0
                hold = nil
                // At its own time: `due` itself, unless a hold after a restart kept it waiting
                transitions.append(
                    .exited(at: lastSeen + settings.exitTimeout, lastSeen: lastSeen, duration: lastSeen - enteredAt))
            case .outside:
                return
            }
        }
    }
}

/// What happened to a region; the engine adds the client, region and beacon to make events.
enum RegionTransition: Sendable, Equatable {
    /// The first determination after monitoring started (`region.state`).
    case determined(RegionState, at: Timestamp)
    case entered(at: Timestamp)
    case exited(at: Timestamp, lastSeen: Timestamp, duration: TimeSpan)
    case dwelled(TimeSpan, at: Timestamp)
}
