/// One reception of one advertisement by one receiver: the unit of input to the engine.
///
/// It has the shape BlueZ gives (`ManufacturerData` a{qv}, `ServiceData` a{sv}) and the shape
/// of a sighting record line (SPEC §1.2), so live input, replay and remote receivers all meet
/// the engine as the same value. `time` is "now" for the engine when it ingests it.
public struct Sighting: Sendable, Equatable {
    public var time: Timestamp
    public var receiver: String
    public var address: String
    public var addressType: String?
    public var rssi: Int
    public var txPower: Int?
    public var name: String?
    /// Company id -> payload after the company id, in the order received.
    public var manufacturerData: [ManufacturerDatum]
    /// 128-bit service UUID (any case) -> payload.
    public var serviceData: [ServiceDatum]

    public init(
        time: Timestamp, receiver: String, address: String, addressType: String? = nil, rssi: Int,
        txPower: Int? = nil, name: String? = nil, manufacturerData: [ManufacturerDatum] = [],
        serviceData: [ServiceDatum] = []
    ) {
        self.time = time
        self.receiver = receiver
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.txPower = txPower
        self.name = name
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
    }
}

public struct ManufacturerDatum: Sendable, Equatable {
    public var company: UInt16
    public var payload: [UInt8]
    public init(company: UInt16, payload: [UInt8]) {
        self.company = company
        self.payload = payload
    }
}

public struct ServiceDatum: Sendable, Equatable {
    public var uuid: String
    public var payload: [UInt8]
    public init(uuid: String, payload: [UInt8]) {
        self.uuid = uuid
        self.payload = payload
    }
}
