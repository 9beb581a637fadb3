import BeaconCore

/// What this gateway's adapters are called in its site: BlueZ names them `hci0`, `hci1`…
/// on every gateway, while the site's engine needs one name per receiver (SPEC §6.1,
/// `receivers[].gateway/adapter`).
///
/// The scanner asks once per device record (`BlueZScanner.receiverName`), so sightings are
/// made under these names. An adapter the site file names as this gateway's gets its receiver's id. One it does not
/// name keeps its adapter name on a gateway alone (as before sites), and in a site becomes
/// `<gateway>.<adapter>`, so that two gateways' `hci0` are not taken for one receiver.
public struct LocalReceivers: Sendable {
    private let byAdapter: [String: String]
    private let prefix: String?

    public init(config: Config) {
        var names: [String: String] = [:]
        for r in config.ownReceivers {
            names[r.adapter ?? r.id] = r.id
        }
        byAdapter = names
        prefix = config.site == nil ? nil : config.gateway.id + "."
    }

    /// The receiver id of adapter `adapter` of this gateway.
    public func receiver(adapter: String) -> String {
        if let named = byAdapter[adapter] { return named }
        guard let prefix else { return adapter }
        let joined = prefix + adapter
        // Ids are at most 64 bytes: an over-long pair keeps the adapter's name.
        return joined.utf8.count <= Identifier.maxBytes ? joined : adapter
    }

    /// The receivers the simulator plays on this gateway: those the site file gives it.
    public static func simulated(_ config: Config) -> Set<String> {
        Set(config.ownReceivers.map(\.id))
    }
}
