import BeaconConfig
import BeaconCore
import BeaconRuntime
import HTTPServer
import Publishing
import Storage
import Synchronization

/// Alarms' `active` flags as changed at runtime by `PATCH /v1/alarms/{id}`; nil means the
/// configured value stands.
final class AlarmFlags: Sendable {
    private let flags = Mutex<[String: Bool]>([:])

    init(_ alarms: [AlarmSpec]) {}

    func isActive(_ id: String) -> Bool? { flags.withLock { $0[id] } }
    func set(_ id: String, active: Bool) { flags.withLock { $0[id] = active } }
}
