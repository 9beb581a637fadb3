import BeaconCore

/// A beacon's identity as the API writes it in `/v1/beacons` and `/v1/assets`: the iBeacon's
/// UUID with its major and minor (either may be absent in an asset's tag, which then matches
/// any), an Eddystone-UID's namespace and instance, or an address for a tag known by it alone.
/// One enum, so that beaconctl prints each kind the same way wherever it appears.
public enum BeaconTag: Sendable, Equatable {
    case ibeacon(uuid: String, major: Int?, minor: Int?)
    case eddystone(namespace: String, instance: String)
    case address(String)
    /// A phone's or watch's key: never shown (it would let anyone follow the device), only
    /// that one is set.
    case irk

    public var json: JSONValue {
        switch self {
        case let .ibeacon(uuid, major, minor):
            var members: [(String, JSONValue)] = [("uuid", .string(uuid))]
            if let major { members.append(("major", .int(major))) }
            if let minor { members.append(("minor", .int(minor))) }
            return .object(members)
        case let .eddystone(namespace, instance):
            return .object([("namespace", .string(namespace)), ("instance", .string(instance))])
        case let .address(address):
            return .object([("address", .string(address))])
        case .irk:
            return .object([("irk", .string("set"))])
        }
    }

    /// Nil for an object that is none of the three.
    public init?(json: JSONValue) {
        if let uuid = json.string("uuid") {
            self = .ibeacon(
                uuid: uuid, major: json.double("major").map { Int($0) }, minor: json.double("minor").map { Int($0) })
        } else if let namespace = json.string("namespace"), let instance = json.string("instance") {
            self = .eddystone(namespace: namespace, instance: instance)
        } else if let address = json.string("address") {
            self = .address(address)
        } else if json.string("irk") != nil {
            self = .irk
        } else {
            return nil
        }
    }

    public init(_ identity: BeaconIdentity) {
        switch identity {
        case let .ibeacon(id):
            self = .ibeacon(uuid: id.uuid.description, major: Int(id.major), minor: Int(id.minor))
        case let .eddystone(id):
            self = .eddystone(namespace: Hex.encode(id.namespace), instance: Hex.encode(id.instance))
        }
    }

    /// How a person reads it in a table: `UUID major/minor`, `namespace/instance`, the address.
    public var text: String {
        switch self {
        case let .ibeacon(uuid, major, minor):
            return "\(uuid) \(major.map(String.init) ?? "-")/\(minor.map(String.init) ?? "-")"
        case let .eddystone(namespace, instance): return "\(namespace)/\(instance)"
        case let .address(address): return address
        case .irk: return "phone (identity resolving key)"
        }
    }
}
