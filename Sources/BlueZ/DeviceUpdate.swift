import BeaconCore
import CDBus

#if canImport(Glibc)
    import Glibc
#endif

/// The Device1 properties one signal changed, whichever way it was read: from a libdbus
/// message (InterfacesAdded, GetManagedObjects, the fallback path) or straight from the
/// wire (the signal stream).
package struct DeviceUpdate: Equatable {
    var rssi: Int?
    /// The ManufacturerData and ServiceData that came, in one value as the device's record
    /// keeps them: taken by the record as they are (`DeviceRecord.apply`).
    var data = AdvertisementData()
    /// Whether ManufacturerData came (possibly empty), replacing the device's.
    var manufacturerChanged = false
    /// Whether ServiceData came, replacing the device's.
    var serviceChanged = false
    var txPower: Int?
    var name: String?
    var address: String?
    var addressType: String?
    /// Paired, trusted or connected: the operator's device, never removed by beacond.
    var kept = false

    var isAdvertisement: Bool { rssi != nil || manufacturerChanged || serviceChanged }

    /// The changed ManufacturerData as arrays (the tests' form); nil when it did not change.
    var manufacturerData: [ManufacturerDatum]? {
        get { manufacturerChanged ? data.manufacturerData : nil }
        set {
            let service = data.serviceData
            data = AdvertisementData(manufacturerData: newValue ?? [], serviceData: service)
            manufacturerChanged = newValue != nil
        }
    }

    /// The changed ServiceData as arrays.
    var serviceData: [ServiceDatum]? {
        get { serviceChanged ? data.serviceData : nil }
        set {
            let manufacturer = data.manufacturerData
            data = AdvertisementData(manufacturerData: manufacturer, serviceData: newValue ?? [])
            serviceChanged = newValue != nil
        }
    }

    /// The Device1 properties beacond reads.
    enum Key {
        case rssi, manufacturerData, serviceData, txPower, name, address, addressType, kept, other

        init(_ key: UnsafeRawPointer, count: Int) {
            func eq(_ s: StaticString) -> Bool {
                s.utf8CodeUnitCount == count && memcmp(key, s.utf8Start, count) == 0
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

    /// From an `a{sv}` read through libdbus. Values of an unexpected type are ignored (the
    /// mock's `aa{qv}` ManufacturerData reads as empty).
    init(_ properties: MessageReader) {
        properties.forEachRawKeyed { key, value in
            switch Key(UnsafeRawPointer(key), count: strlen(key)) {
            case .rssi: rssi = value.int16().map(Int.init)
            case .manufacturerData: manufacturerData = Self.manufacturerData(value)
            case .serviceData: serviceData = Self.serviceData(value)
            case .txPower: txPower = value.int16().map(Int.init)
            case .name: name = value.string()
            case .address: address = value.string()
            case .addressType: addressType = value.string()
            case .kept: if value.bool() == true { kept = true }
            case .other: break
            }
        }
    }

    init() {}

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

    static func serviceData(_ value: MessageReader) -> [ServiceDatum] {
        var out: [ServiceDatum] = []
        value.forEachStringKeyed { uuid, payload in
            if let bytes = payload.bytes() { out.append(ServiceDatum(uuid: uuid, payload: bytes)) }
        }
        return out
    }
}
