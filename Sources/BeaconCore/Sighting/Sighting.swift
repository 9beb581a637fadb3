/// One reception of one advertisement by one receiver: the unit of input to the engine.
///
/// It carries what BlueZ gives (`ManufacturerData` a{qv}, `ServiceData` a{sv}) and what a
/// sighting record line holds (SPEC §1.2), so live input, replay and remote receivers all
/// meet the engine as the same value. `time` is "now" for the engine when it ingests it.
///
/// Flat, with no heap part on the common path: the address as its 48 bits, the receiver as an
/// interned number (`ReceiverID`), the data inline (`AdvertisementData`). Why: replay, a
/// site's locator and a busy store make and drop millions of these, and as strings and arrays
/// their three allocations cost as much as the engine's work on them. What is rare keeps its
/// text (`rare`): an address that is not `AA:BB:CC:DD:EE:FF`, an address type other than
/// `public` or `random`, a receiver name past `ReceiverNames.limit`. The text forms
/// (`receiver`, `address`, `manufacturerData`, …) read and write the same value, for the
/// API, the writers and the tests; an address read back is in upper case.
public struct Sighting: Sendable, Equatable {
    public var time: Timestamp
    /// The receiver that heard it; `ReceiverID.unlisted` when the names table was full.
    public var receiverID: ReceiverID
    /// The address's 48 bits, most significant byte first; 0 when `rare` holds its text.
    public var addressValue: UInt64
    public var addressKind: AddressKind
    /// dBm, as reported (−127…20 in records); held in 16 bits to keep the value small.
    private var rssiValue: Int16
    /// dBm, or `Int16.min` for none.
    private var txPowerValue: Int16
    public var name: String?
    public var data: AdvertisementData
    var rare: Rarities?

    /// How the advertiser's address is given (BlueZ's `AddressType`; a record's `address_type`).
    public enum AddressKind: UInt8, Sendable {
        case unspecified, `public`, random, other
    }

    /// The texts that have no flat form. Immutable: a setter replaces it.
    final class Rarities: Sendable, Equatable {
        let receiver: String?
        let address: String?
        let addressType: String?

        init(receiver: String?, address: String?, addressType: String?) {
            self.receiver = receiver
            self.address = address
            self.addressType = addressType
        }

        static func make(receiver: String?, address: String?, addressType: String?) -> Rarities? {
            receiver == nil && address == nil && addressType == nil
                ? nil : Rarities(receiver: receiver, address: address, addressType: addressType)
        }

        static func == (a: Rarities, b: Rarities) -> Bool {
            a.receiver == b.receiver && a.address == b.address && a.addressType == b.addressType
        }
    }

    /// The flat form, as the readers make it.
    public init(
        time: Timestamp, receiver: ReceiverID, address: UInt64, addressKind: AddressKind = .unspecified, rssi: Int,
        txPower: Int? = nil, name: String? = nil, data: AdvertisementData = AdvertisementData()
    ) {
        self.time = time
        receiverID = receiver
        addressValue = address & 0xFFFF_FFFF_FFFF
        self.addressKind = addressKind
        rssiValue = Int16(clamping: rssi)
        txPowerValue = txPower.map { Int16(clamping: max($0, Int(Int16.min) + 1)) } ?? Int16.min
        self.name = name
        self.data = data
    }

    /// The text form, as tests and the slower paths (JSON documents, D-Bus dictionaries) give it.
    public init(
        time: Timestamp, receiver: String, address: String, addressType: String? = nil, rssi: Int,
        txPower: Int? = nil, name: String? = nil, manufacturerData: [ManufacturerDatum] = [],
        serviceData: [ServiceDatum] = []
    ) {
        self.init(
            time: time, receiver: .unlisted, address: 0, rssi: rssi, txPower: txPower, name: name,
            data: AdvertisementData(manufacturerData: manufacturerData, serviceData: serviceData))
        self.receiver = receiver
        self.address = address
        self.addressType = addressType
    }

    public var rssi: Int {
        get { Int(rssiValue) }
        set { rssiValue = Int16(clamping: newValue) }
    }

    public var txPower: Int? {
        get { txPowerValue == Int16.min ? nil : Int(txPowerValue) }
        set { txPowerValue = newValue.map { Int16(clamping: max($0, Int(Int16.min) + 1)) } ?? Int16.min }
    }

    /// The receiver's name.
    public var receiver: String {
        get { rare?.receiver ?? receiverID.name }
        set {
            if let id = ReceiverID(newValue) {
                receiverID = id
                setRare(receiver: nil)
            } else {
                receiverID = .unlisted
                setRare(receiver: newValue)
            }
        }
    }

    /// `AA:BB:CC:DD:EE:FF` in upper case, or the text given when it is not of that form.
    public var address: String {
        get { rare?.address ?? BluetoothAddress(value: addressValue).text }
        set {
            if let value = newValue.utf8.withContiguousStorageIfAvailable({
                Self.addressValue(UnsafeRawBufferPointer($0))
            })
                ?? Self.addressValue(Array(newValue.utf8))
            {
                addressValue = value
                setRare(address: nil)
            } else {
                addressValue = 0
                setRare(address: newValue)
            }
        }
    }

    /// The address's 48 bits when it was given as `AA:BB:CC:DD:EE:FF`; nil for any other text.
    public var bluetoothAddress: BluetoothAddress? {
        rare?.address == nil ? BluetoothAddress(value: addressValue) : nil
    }

    /// `public`, `random`, another text given, or nil when the source does not say.
    public var addressType: String? {
        get {
            switch addressKind {
            case .unspecified: return nil
            case .public: return "public"
            case .random: return "random"
            case .other: return rare?.addressType
            }
        }
        set {
            switch newValue {
            case nil: addressKind = .unspecified
            case "public"?: addressKind = .public
            case "random"?: addressKind = .random
            default: addressKind = .other
            }
            setRare(addressType: addressKind == .other ? newValue : nil)
        }
    }

    /// Company id → payload after the company id, in the order received.
    public var manufacturerData: [ManufacturerDatum] {
        get { data.manufacturerData }
        set { data = AdvertisementData(manufacturerData: newValue, serviceData: data.serviceData) }
    }

    /// Service UUID → payload; a UUID read back is BlueZ's 128-bit form in lower case.
    public var serviceData: [ServiceDatum] {
        get { data.serviceData }
        set { data = AdvertisementData(manufacturerData: data.manufacturerData, serviceData: newValue) }
    }

    private mutating func setRare(receiver: String?) {
        rare = Rarities.make(receiver: receiver, address: rare?.address, addressType: rare?.addressType)
    }

    private mutating func setRare(address: String?) {
        rare = Rarities.make(receiver: rare?.receiver, address: address, addressType: rare?.addressType)
    }

    private mutating func setRare(addressType: String?) {
        rare = Rarities.make(receiver: rare?.receiver, address: rare?.address, addressType: addressType)
    }

    /// The 48 bits of `AA:BB:CC:DD:EE:FF` (either case); nil for anything else.
    @inline(__always)
    public static func addressValue(_ text: UnsafeRawBufferPointer) -> UInt64? {
        guard text.count == 17 else { return nil }
        var value: UInt64 = 0
        var bad: UInt8 = 0
        for byte in 0..<6 {
            let at = byte * 3
            let high = Hex.digit(text[at])
            let low = Hex.digit(text[at + 1])
            bad |= (high | low) & 0xF0
            if byte < 5, text[at + 2] != UInt8(ascii: ":") { return nil }
            value = value << 8 | UInt64(high << 4 | low & 0xF)
        }
        return bad == 0 ? value : nil
    }

    static func addressValue(_ bytes: [UInt8]) -> UInt64? {
        bytes.withUnsafeBytes { addressValue($0) }
    }
}

extension ReceiverID {
    /// A receiver whose name did not fit the table (`ReceiverNames.limit`): the sighting
    /// carries the name itself.
    public static let unlisted = ReceiverID(index: UInt32.max)
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
