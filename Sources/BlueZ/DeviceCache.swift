import BeaconCore
import CDBus

#if canImport(Glibc)
    import Glibc
#endif

/// What BlueZ has told us about one `org.bluez.Device1` object. PropertiesChanged carries
/// only what changed, so a sighting is built from this merged view.
struct DeviceRecord {
    var adapter: String
    /// What each sighting of it carries, made once: the adapter's interned name, the address
    /// read into its flat form, the data of the last advertisement.
    private var template: Sighting

    init(device: DevicePath, lastHeard: Timestamp) {
        adapter = device.adapter
        self.lastHeard = lastHeard
        template = Sighting(
            time: lastHeard, receiver: ReceiverID(device.adapter) ?? .unlisted, address: device.address, rssi: 0)
        if template.receiverID == .unlisted { template.receiver = device.adapter }
    }

    var rssi: Int?
    /// Paired, trusted or connected devices belong to the operator: never removed by us.
    var kept = false
    var lastHeard: Timestamp

    /// Merges what changed; returns true when it includes an advertisement (RSSI,
    /// manufacturer or service data).
    mutating func apply(_ update: DeviceUpdate) -> Bool {
        if let v = update.rssi { rssi = v }
        if update.manufacturer != nil || update.service != nil {
            template.data.replace(manufacturerWith: update.manufacturer, serviceWith: update.service)
        }
        if let v = update.txPower { template.txPower = v }
        if let v = update.name { template.name = v }
        if let v = update.address { template.address = v }
        if let v = update.addressType { template.addressType = v }
        if update.kept { kept = true }
        return update.isAdvertisement
    }

    func sighting(at t: Timestamp) -> Sighting? {
        guard let rssi else { return nil }
        var sighting = template
        sighting.time = t
        sighting.rssi = rssi
        return sighting
    }
}
