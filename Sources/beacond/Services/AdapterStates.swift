import BeaconCore
import Synchronization

/// The adapters' latest states, as the scanner reported them (for status and metrics).
final class AdapterStates: Sendable {
    private let states = Mutex<[String: AdapterState]>([:])
    /// Whether an adapter has ever heard (discovered), and whether none does now.
    private let sight = Mutex<(seen: Bool, blind: Bool)>((false, false))

    /// Records an adapter's change; returns true when, with it, the gateway went blind (no
    /// adapter present, powered and discovering, after one was), false when it hears again,
    /// nil when neither (`BeaconEngine.setBlind`).
    func update(_ status: AdapterState) -> Bool? {
        let hearing = states.withLock { states in
            states[status.adapter] = status
            return states.values.contains(where: \.hearing)
        }
        return sight.withLock { sight in
            if hearing {
                sight.seen = true
                guard sight.blind else { return nil }
                sight.blind = false
                return false
            }
            guard sight.seen, !sight.blind else { return nil }
            sight.blind = true
            return true
        }
    }

    /// Sorted by name.
    var all: [AdapterState] { states.withLock { $0.values.sorted { $0.adapter < $1.adapter } } }
}
