import BeaconCore
import CDBus
import Logging
import Synchronization

extension BlueZScanner {
    func handle(_ message: DBusMessageRef) {
        if dbus_message_get_type(message.raw) == DBUS_MESSAGE_TYPE_METHOD_CALL {
            answer(message)
            return
        }
        guard message.isSignal else {
            // A method return or error: the answer to a RegisterAdvertisement sent earlier.
            registrationAnswered(message)
            return
        }
        signalsReceived.add(1, ordering: .relaxed)
        if message.isSignal("org.freedesktop.DBus.Properties", "PropertiesChanged") {
            propertiesChanged(message)
        } else if message.isSignal("org.freedesktop.DBus.ObjectManager", "InterfacesAdded") {
            var r = message.reader
            guard let path = r.string() else { return }
            r.next()
            objectAdded(path: path, interfaces: r, live: true)
        } else if message.isSignal("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved") {
            var r = message.reader
            guard let path = r.string() else { return }
            r.next()
            r.forEachElement { element in
                if let interface = element.string() { interfaceRemoved(path: path, interface: interface) }
            }
        } else if message.isSignal("org.freedesktop.DBus", "NameOwnerChanged") {
            var r = message.reader
            guard r.string() == Self.service else { return }
            r.next()
            r.next()
            let newOwner = r.string() ?? ""
            if newOwner.isEmpty {
                bluezGone(reason: "bluetoothd left the bus")
            } else {
                logger.notice("bluez.appeared", metadata: ["owner": "\(newOwner)"])
                needsSync = true
            }
        }
    }

    private func propertiesChanged(_ message: DBusMessageRef) {
        guard let path = message.path else { return }
        var r = message.reader
        guard let interface = r.string() else { return }
        r.next()
        if interface == Self.deviceInterface {
            deviceChanged(path: path, properties: r)
        } else if interface == Self.adapterInterface {
            adapterChanged(path: path, properties: r)
        }
    }

    /// A Device1 appeared or changed: merge what changed, and if it was an advertisement
    /// (RSSI or payload), turn it into a sighting heard by its adapter now.
    func deviceChanged(path: String, properties: MessageReader) {
        deviceChanged(path: path, update: DeviceUpdate(properties))
    }

    func deviceChanged(path: String, update: DeviceUpdate) {
        guard let device = DevicePath(path) else { return }
        deviceChanged(device: device, update: update)
    }

    func deviceChanged(device: DevicePath, update: DeviceUpdate) {
        // One hash lookup per advertisement: later accesses go through the index.
        var found = devices.index(forKey: device)
        if found == nil {
            guard wants(device.adapter) else { return }
            devices[device] = record(for: device)
            found = devices.index(forKey: device)
        }
        guard let index = found, devices.values[index].apply(update) else { return }
        let t = clock()
        devices.values[index].lastHeard = t
        if let sighting = devices.values[index].sighting(at: t) { batch.append(sighting) }
    }

    /// A new device's record, its sightings under its adapter's receiver name.
    private func record(for device: DevicePath) -> DeviceRecord {
        let record = DeviceRecord(device: device, receiver: receiverName(device.adapter), lastHeard: clock())
        adapterOfReceiver[record.template.receiver] = device.adapter
        return record
    }

    /// An object with its interfaces: monitor managers are noted first, so an adapter's
    /// discovery starts passive when it can, whatever order the interfaces come in.
    func objectAdded(path: String, interfaces: MessageReader, live: Bool) {
        interfaces.forEachStringKeyed { interface, _ in
            if interface == Self.monitorManagerInterface { monitorManagers.insert(path) }
            if interface == Self.advertisingManagerInterface { advertisingManagers.insert(path) }
        }
        interfaces.forEachStringKeyed { interface, properties in
            interfaceAdded(path: path, interface: interface, properties: properties, live: live)
        }
    }

    func interfaceAdded(path: String, interface: String, properties: MessageReader, live: Bool) {
        if interface == Self.adapterInterface {
            adapterAppeared(path: path, properties: properties)
        } else if interface == Self.deviceInterface {
            if live {
                deviceChanged(path: path, properties: properties)
            } else if let device = DevicePath(path), devices[device] == nil, wants(device.adapter) {
                // Objects from GetManagedObjects: cached, but their RSSI is old news, not a sighting.
                var record = record(for: device)
                _ = record.apply(DeviceUpdate(properties))
                devices[device] = record
            }
        }
    }

    func interfaceRemoved(path: String, interface: String) {
        if interface == Self.deviceInterface {
            // BlueZ's cache housekeeping, not a beacon leaving: exits come from the engine's timers.
            if let device = DevicePath(path) { devices[device] = nil }
        } else if interface == Self.adapterInterface {
            adapterRemoved(path: path)
        } else if interface == Self.monitorManagerInterface {
            monitorManagers.remove(path)
        } else if interface == Self.advertisingManagerInterface {
            advertisingManagers.remove(path)
        }
    }
}
