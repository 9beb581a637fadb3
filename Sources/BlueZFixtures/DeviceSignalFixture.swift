import BlueZ
import CDBus

/// Builds Device1 `PropertiesChanged` signals the way bluetoothd sends them, for the parser
/// tests and for `bluez-emitter`, the benchmark's stand-in for bluetoothd.
public enum DeviceSignalFixture {
    /// A message's wire bytes as libdbus marshals them (what the signal stream reads), and
    /// the message released.
    public static func wireBytes(consuming message: OpaquePointer) -> [UInt8] {
        defer { dbus_message_unref(message) }
        var data: UnsafeMutablePointer<CChar>? = nil
        var length: Int32 = 0
        _ = dbus_message_marshal(message, &data, &length)
        defer { dbus_free(data) }
        return Array(UnsafeRawBufferPointer(start: data, count: Int(length)))
    }

    /// `PropertiesChanged(interface, {RSSI, ManufacturerData, …}, [])` on a device path.
    /// The caller owns the returned message (`dbus_message_unref`).
    public static func propertiesChanged(
        path: String, interface: String = "org.bluez.Device1", rssi: Int16, manufacturerData: [(UInt16, [UInt8])] = [],
        serviceData: [(String, [UInt8])] = [], name: String? = nil, paired: Bool = false, uuids: [String] = []
    ) -> OpaquePointer {
        let message = dbus_message_new_signal(path, "org.freedesktop.DBus.Properties", "PropertiesChanged")!
        var w = MessageWriter(message)
        w.append(interface)
        w.openContainer(BEACOND_DBUS_TYPE_ARRAY, "{sv}") { props in
            if !uuids.isEmpty {
                props.appendEntry("UUIDs", "as") { v in
                    v.openContainer(BEACOND_DBUS_TYPE_ARRAY, "s") { list in uuids.forEach { list.append($0) } }
                }
            }
            props.appendEntry("RSSI", "n") { $0.append(.int16(rssi)) }
            if !manufacturerData.isEmpty {
                props.appendEntry("ManufacturerData", "a{qv}") { v in
                    v.openContainer(BEACOND_DBUS_TYPE_ARRAY, "{qv}") { dict in
                        for (company, payload) in manufacturerData {
                            dict.openContainer(BEACOND_DBUS_TYPE_DICT_ENTRY, nil) { e in
                                e.appendUInt16(company)
                                e.openContainer(BEACOND_DBUS_TYPE_VARIANT, "ay") { $0.appendBytes(payload) }
                            }
                        }
                    }
                }
            }
            if !serviceData.isEmpty {
                props.appendEntry("ServiceData", "a{sv}") { v in
                    v.openContainer(BEACOND_DBUS_TYPE_ARRAY, "{sv}") { dict in
                        for (uuid, payload) in serviceData { dict.appendEntry(uuid, "ay") { $0.appendBytes(payload) } }
                    }
                }
            }
            if let name { props.appendEntry("Name", "s") { $0.append(name) } }
            if paired { props.appendEntry("Paired", "b") { $0.append(.bool(true)) } }
        }
        w.openContainer(BEACOND_DBUS_TYPE_ARRAY, "s") { _ in }
        return message
    }
}
