import BeaconCore
import CDBus

#if canImport(Glibc)
    import Glibc
#endif

/// What BlueZ has told us about one `org.bluez.Device1` object. PropertiesChanged carries
/// only what changed, so a sighting is built from this merged view.
struct DeviceRecord {
    var adapter: String
    /// What each sighting of it carries, made once: the receiver's id in the site (the
    /// adapter's name mapped when the record is made, not per sighting), the address read
    /// into its flat form, the data of the last advertisement.
    private(set) var template: Sighting

    /// `receiver`: the name its adapter's sightings go under (`BlueZScanner.receiverName`).
    init(device: DevicePath, receiver: String, lastHeard: Timestamp) {
        adapter = device.adapter
        self.lastHeard = lastHeard
        template = Sighting(
            time: lastHeard, receiver: ReceiverID(receiver) ?? .unlisted, address: device.address, rssi: 0)
        if template.receiverID == .unlisted { template.receiver = receiver }
    }

    var rssi: Int?
    /// Paired, trusted or connected devices belong to the operator: never removed by us.
    var kept = false
    var lastHeard: Timestamp

    /// Merges what a signal changed; returns true when it includes an advertisement (RSSI,
    /// manufacturer or service data). The advertisement data is taken as the signal's read
    /// made it (`AdvertisementData.take`), not copied entry by entry.
    mutating func apply(_ update: DeviceUpdate) -> Bool {
        if let v = update.rssi { rssi = v }
        if update.manufacturerChanged || update.serviceChanged {
            template.data.take(
                update.data, manufacturerChanged: update.manufacturerChanged, serviceChanged: update.serviceChanged)
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
