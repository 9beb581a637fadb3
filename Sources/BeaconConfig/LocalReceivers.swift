import BeaconCore

/// What this gateway's adapters are called in its site: BlueZ names them `hci0`, `hci1`…
/// on every gateway, while the site's engine needs one name per receiver (SPEC §6.1,
/// `receivers[].gateway/adapter`).
///
/// An adapter the site file names as this gateway's gets its receiver's id. One it does not
/// name keeps its adapter name on a gateway alone (as before sites), and in a site becomes
/// `<gateway>.<adapter>`, so that two gateways' `hci0` are not taken for one receiver.
public struct LocalReceivers: Sendable {
    private let byAdapter: [String: String]
    private let prefix: String?
    /// Some adapter gets another name: decided once, not per batch.
    private let renames: Bool

    public init(config: Config) {
        var names: [String: String] = [:]
        for r in config.ownReceivers {
            names[r.adapter ?? r.id] = r.id
        }
        byAdapter = names
        prefix = config.site == nil ? nil : config.gateway.id + "."
        renames = prefix != nil || names.contains { $0.key != $0.value }
    }

    /// The receiver id of adapter `adapter` of this gateway.
    public func receiver(adapter: String) -> String {
        if let named = byAdapter[adapter] { return named }
        guard let prefix else { return adapter }
        let joined = prefix + adapter
        // Ids are at most 64 bytes: an over-long pair keeps the adapter's name.
        return joined.utf8.count <= Identifier.maxBytes ? joined : adapter
    }

    /// The sightings under their receiver ids: the new one worked out once per run of one
    /// adapter's sightings (`Sighting.receiverRuns`), not through its name per sighting.
    public func rename(_ batch: [Sighting]) -> [Sighting] {
        guard renames else { return batch }
        var out = batch
        for run in Sighting.receiverRuns(batch) {
            let renamed = receiver(adapter: run.name)
            if let id = ReceiverID(renamed), batch[run.range.lowerBound].receiverID != .unlisted {
                for i in run.range { out[i].receiverID = id }
            } else {
                for i in run.range { out[i].receiver = renamed }
            }
        }
        return out
    }

    /// The receivers the simulator plays on this gateway: those the site file gives it.
    public static func simulated(_ config: Config) -> Set<String> {
        Set(config.ownReceivers.map(\.id))
    }
}
