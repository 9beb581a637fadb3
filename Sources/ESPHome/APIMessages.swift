import BeaconCore

/// What beacond sends a proxy: the few messages of ESPHome's native API (api.proto) a client
/// that only listens to advertisements needs, as (message type, protobuf payload).
public enum ClientMessage: Sendable, Equatable {
    case hello(clientInfo: String)
    /// `AuthenticationRequest` (the old `ConnectRequest`): sent with the Hello, with an empty
    /// password when none is configured, as Home Assistant's client does; a proxy answers only
    /// when the password is wrong.
    case authenticate(password: String)
    case disconnectRequest
    case disconnectResponse
    case pingRequest
    case pingResponse
    case deviceInfoRequest
    /// Raw advertisements (`BLUETOOTH_PROXY_SUBSCRIPTION_FLAG_RAW_ADVERTISEMENTS`): the bytes
    /// the air carried, batched, rather than one parsed message per advertisement.
    case subscribeRawAdvertisements

    /// The API version this client speaks (aioesphomeapi's at the time of writing).
    static let apiVersion = (major: UInt64(1), minor: UInt64(10))

    public var type: UInt16 {
        switch self {
        case .hello: return 1
        case .authenticate: return 3
        case .disconnectRequest: return 5
        case .disconnectResponse: return 6
        case .pingRequest: return 7
        case .pingResponse: return 8
        case .deviceInfoRequest: return 9
        case .subscribeRawAdvertisements: return 66
        }
    }

    public var payload: [UInt8] {
        var w = ProtobufWriter()
        switch self {
        case let .hello(info):
            w.string(1, info)
            w.uint(2, Self.apiVersion.major)
            w.uint(3, Self.apiVersion.minor)
        case let .authenticate(password): w.string(1, password)
        case .subscribeRawAdvertisements: w.uint(1, 1)
        case .disconnectRequest, .disconnectResponse, .pingRequest, .pingResponse, .deviceInfoRequest: break
        }
        return w.bytes
    }
}

/// What a proxy says about itself (`HelloResponse` and `DeviceInfoResponse`), for status and
/// doctor.
public struct ProxyIdentity: Sendable, Equatable {
    public var name = ""
    public var serverInfo = ""
    public var apiVersion = ""
    public var model = ""
    public var manufacturer = ""
    public var esphomeVersion = ""
    public var macAddress = ""
    public var bluetoothMACAddress = ""
    public var friendlyName = ""
    public var proxyFeatureFlags: UInt32 = 0
    public init() {}
}

/// One advertisement as a proxy forwards it.
public struct RawAdvertisement: Sendable, Equatable {
    /// The 48-bit address, as a number (most significant byte first when written).
    public var address: UInt64
    public var rssi: Int
    /// 0 public, 1 random (ESPHome's `address_type`).
    public var addressType: UInt32
    public var data: [UInt8]

    public init(address: UInt64, rssi: Int, addressType: UInt32, data: [UInt8]) {
        (self.address, self.rssi, self.addressType, self.data) = (address, rssi, addressType, data)
    }

    /// The sighting of `receiver` this advertisement is, at `time`; throws when its AD
    /// structures overrun (nothing of it is trusted then).
    public func sighting(receiver: ReceiverID, at time: Timestamp) throws(ADStructures.Problem) -> Sighting {
        let parsed = try ADStructures(parsing: data)
        let kind: Sighting.AddressKind = addressType == 0 ? .public : addressType == 1 ? .random : .other
        return Sighting(
            time: time, receiver: receiver, address: address, addressKind: kind, rssi: rssi,
            txPower: parsed.txPower, name: parsed.name, data: parsed.data)
    }
}

/// What a proxy sends, read from one frame's message type and payload.
public enum ProxyMessage: Sendable, Equatable {
    case hello(ProxyIdentity)
    case authenticationFailed
    case disconnectRequest
    case disconnectResponse
    case pingRequest
    case pingResponse
    case deviceInfo(ProxyIdentity)
    case advertisements([RawAdvertisement])
    /// A message this client does not use (states of entities, logs, …).
    case other(type: UInt16)

    /// The most advertisements one message may carry: ESPHome batches 16 or so; a message
    /// claiming more is refused rather than allocated.
    public static let maxAdvertisements = 256

    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    public init(type: UInt16, payload: ArraySlice<UInt8>) throws(Problem) {
        do throws(ProtobufReader.Problem) {
            switch type {
            case 2:
                var id = ProxyIdentity()
                var (major, minor) = (UInt64(0), UInt64(0))
                try Self.fields(payload) { field, value in
                    switch field {
                    case 1: major = value.uint
                    case 2: minor = value.uint
                    case 3: id.serverInfo = value.text
                    case 4: id.name = value.text
                    default: break
                    }
                }
                id.apiVersion = "\(major).\(minor)"
                self = .hello(id)
            case 4:
                var invalid = false
                try Self.fields(payload) { field, value in if field == 1 { invalid = value.bool } }
                self = invalid ? .authenticationFailed : .other(type: 4)
            case 5: self = .disconnectRequest
            case 6: self = .disconnectResponse
            case 7: self = .pingRequest
            case 8: self = .pingResponse
            case 10:
                var id = ProxyIdentity()
                try Self.fields(payload) { field, value in
                    switch field {
                    case 2: id.name = value.text
                    case 3: id.macAddress = value.text
                    case 4: id.esphomeVersion = value.text
                    case 6: id.model = value.text
                    case 12: id.manufacturer = value.text
                    case 13: id.friendlyName = value.text
                    case 15: id.proxyFeatureFlags = UInt32(truncatingIfNeeded: value.uint)
                    case 18: id.bluetoothMACAddress = value.text
                    default: break
                    }
                }
                self = .deviceInfo(id)
            case 93:
                self = .advertisements(try Self.advertisements(payload))
            default:
                self = .other(type: type)
            }
        } catch {
            throw Problem(description: "message type \(type): \(error)")
        }
    }

    /// `BluetoothLERawAdvertisementsResponse`'s list; a reader problem reads as the others'.
    private static func advertisements(_ payload: ArraySlice<UInt8>) throws(ProtobufReader.Problem)
        -> [RawAdvertisement]
    {
        var list: [RawAdvertisement] = []
        var reader = ProtobufReader(payload)
        while let (field, value) = try reader.next() {
            guard field == 1 else { continue }
            guard list.count < Self.maxAdvertisements else { throw .tooMany(Self.maxAdvertisements) }
            var ad = RawAdvertisement(address: 0, rssi: 0, addressType: 0, data: [])
            try Self.fields(value.data) { f, v in
                switch f {
                case 1: ad.address = v.uint & 0xFFFF_FFFF_FFFF
                case 2: ad.rssi = v.sint
                case 3: ad.addressType = UInt32(truncatingIfNeeded: v.uint)
                case 4: ad.data = Array(v.data)
                default: break
                }
            }
            list.append(ad)
        }
        return list
    }

    private static func fields(
        _ bytes: ArraySlice<UInt8>, _ body: (Int, ProtobufReader.Value) throws(ProtobufReader.Problem) -> Void
    ) throws(ProtobufReader.Problem) {
        var reader = ProtobufReader(bytes)
        while let (field, value) = try reader.next() { try body(field, value) }
    }
}
