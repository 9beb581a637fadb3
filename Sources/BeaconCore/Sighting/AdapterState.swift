/// A Bluetooth adapter as the gateway sees it: the one shape the scanner reports, the engine's
/// `adapter.state` event carries, `/v1/status` lists and `beaconctl` reads, so that a new
/// field is added once.
public struct AdapterState: Sendable, Equatable, CustomStringConvertible {
    public var adapter: String
    public var present: Bool
    public var powered: Bool
    public var discovering: Bool

    public init(adapter: String, present: Bool, powered: Bool, discovering: Bool) {
        self.adapter = adapter
        self.present = present
        self.powered = powered
        self.discovering = discovering
    }

    /// Present, powered and discovering: it hears.
    public var hearing: Bool { present && powered && discovering }

    public var description: String {
        "\(adapter) present=\(present) powered=\(powered) discovering=\(discovering)"
    }

    public var event: EventPayload {
        .adapterState(adapter: adapter, present: present, powered: powered, discovering: discovering)
    }
}
