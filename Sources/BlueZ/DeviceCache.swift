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

    /// Merges what changed; returns true when it includes an advertisement (RSSI,
    /// manufacturer or service data).
    mutating func apply(_ update: DeviceUpdate) -> Bool {
        if let v = update.rssi { rssi = v }
        if let v = update.manufacturerData { manufacturerData = v }
        if let v = update.serviceData { serviceData = v }
        if let v = update.txPower { txPower = v }
        if let v = update.name { name = v }
        if let v = update.address { address = v }
        if let v = update.addressType { addressType = v }
        if update.kept { kept = true }
        return update.isAdvertisement
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
