import BeaconCore
import CDBus

#if canImport(Glibc)
    import Glibc
#endif

/// What BlueZ has told us about one `org.bluez.Device1` object. PropertiesChanged carries
/// only what changed, so a sighting is built from this merged view.
struct DeviceRecord {
    var adapter: String
    var address: String
    var addressType: String?
    var name: String?
    var rssi: Int?
    var txPower: Int?
    var manufacturerData: [ManufacturerDatum] = []
    var serviceData: [ServiceDatum] = []
    /// Paired, trusted or connected devices belong to the operator: never removed by us.
    var kept = false
    var lastHeard: Timestamp

    /// `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF` -> ("hci0", "AA:BB:CC:DD:EE:FF").
    static func parse(path: String) -> (adapter: String, address: String)? {
        let parts = path.split(separator: "/")
        guard parts.count == 4, parts[0] == "org", parts[1] == "bluez", parts[3].hasPrefix("dev_") else { return nil }
        return (String(parts[2]), parts[3].dropFirst(4).replacingUnderscores())
    }

    /// Applies the properties of an a{sv} (InterfacesAdded or PropertiesChanged); returns
    /// true when they include an advertisement (RSSI, manufacturer or service data).
    mutating func apply(_ properties: MessageReader) -> Bool {
        var advertised = false
        properties.forEachRawKeyed { key, value in
            switch Key(key) {
            case .rssi:
                if let v = value.int16() {
                    rssi = Int(v)
                    advertised = true
                }
            case .manufacturerData:
                manufacturerData = Self.manufacturerData(value)
                advertised = true
            case .serviceData:
                serviceData = Self.serviceData(value)
                advertised = true
            case .txPower: txPower = value.int16().map(Int.init)
            case .name: name = value.string()
            case .address: if let a = value.string() { address = a }
            case .addressType: addressType = value.string()
            case .kept: if value.bool() == true { kept = true }
            case .other: break
            }
        }
        return advertised
    }

    /// The Device1 properties beacond reads, recognised from the C string without a copy.
    private enum Key {
        case rssi, manufacturerData, serviceData, txPower, name, address, addressType, kept, other

        init(_ key: UnsafePointer<CChar>) {
            func eq(_ s: StaticString) -> Bool {
                strcmp(key, UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)) == 0
            }
            if eq("RSSI") {
                self = .rssi
            } else if eq("ManufacturerData") {
                self = .manufacturerData
            } else if eq("ServiceData") {
                self = .serviceData
            } else if eq("TxPower") {
                self = .txPower
            } else if eq("Name") {
                self = .name
            } else if eq("Address") {
                self = .address
            } else if eq("AddressType") {
                self = .addressType
            } else if eq("Paired") || eq("Trusted") || eq("Connected") {
                self = .kept
            } else {
                self = .other
            }
        }
    }

    /// `a{qv}` with each variant holding `ay`. Anything else (the mock's `aa{qv}`) reads as empty.
    static func manufacturerData(_ value: MessageReader) -> [ManufacturerDatum] {
        var out: [ManufacturerDatum] = []
        guard value.elementType == BEACOND_DBUS_TYPE_DICT_ENTRY else { return out }
        value.forEachElement { entry in
            var kv = entry.recurse()
            guard let company = kv.uint16() else { return }
            kv.next()
            guard kv.argType == BEACOND_DBUS_TYPE_VARIANT, let bytes = kv.recurse().bytes() else { return }
            out.append(ManufacturerDatum(company: company, payload: bytes))
        }
        return out
    }

    /// `a{sv}` with each variant holding `ay`.
    static func serviceData(_ value: MessageReader) -> [ServiceDatum] {
        var out: [ServiceDatum] = []
        value.forEachStringKeyed { uuid, payload in
            if let bytes = payload.bytes() { out.append(ServiceDatum(uuid: uuid, payload: bytes)) }
        }
        return out
    }

    func sighting(at t: Timestamp) -> Sighting? {
        guard let rssi else { return nil }
        return Sighting(
            time: t, receiver: adapter, address: address, addressType: addressType, rssi: rssi, txPower: txPower,
            name: name, manufacturerData: manufacturerData, serviceData: serviceData)
    }
}

extension Substring {
    fileprivate func replacingUnderscores() -> String {
        String(map { $0 == "_" ? ":" : $0 })
    }
}
