import BeaconCore
import CDBus
import Logging

/// Passive scanning (`bluetooth.scan: passive`) through org.bluez.AdvertisementMonitorManager1:
/// beacond exports one monitor with or-patterns for the beacon formats, and BlueZ reports only
/// matching advertisements, without scan requests on the air. Adapters without the manager
/// (or a kernel without the MSFT/AOSP offload BlueZ needs) fall back to active discovery,
/// with a log line saying so.
extension BlueZScanner {
    static let monitorManagerInterface = "org.bluez.AdvertisementMonitorManager1"
    static let monitorInterface = "org.bluez.AdvertisementMonitor1"
    static let monitorRoot = "/org/beacond/monitor"
    static let monitorPath = "/org/beacond/monitor/beacons"

    /// (start position, AD type, content): iBeacon (Apple 0x004C, 02 15), AltBeacon (BE AC
    /// after any company id) and Eddystone (service data for 0xFEAA).
    static let monitorPatterns: [(UInt8, UInt8, [UInt8])] = [
        (0, 0xFF, [0x4C, 0x00, 0x02, 0x15]), (2, 0xFF, [0xBE, 0xAC]), (0, 0x16, [0xAA, 0xFE]),
    ]

    /// Registers the monitor on an adapter; false when passive scanning is not available.
    func registerMonitor(_ path: String) -> Bool {
        let name = Self.adapterName(path)
        guard monitorManagers.contains(path) else {
            logger.notice(
                "adapter.passive_unavailable",
                metadata: ["adapter": "\(name)", "reason": "no AdvertisementMonitorManager1", "scan": "active"])
            return false
        }
        do {
            _ = try connection?.call(
                destination: Self.service, path: path, interface: Self.monitorManagerInterface,
                method: "RegisterMonitor"
            ) { $0.appendObjectPath(Self.monitorRoot) }
            logger.info("adapter.passive_scanning", metadata: ["adapter": "\(name)"])
            return true
        } catch {
            logger.notice(
                "adapter.passive_unavailable",
                metadata: ["adapter": "\(name)", "error": "\(error.description)", "scan": "active"])
            return false
        }
    }

    /// Answers BlueZ's calls on the exported monitor (and advertisement) objects.
    func answer(_ call: DBusMessageRef) {
        guard let c = connection, let path = call.path else { return }
        if path.hasPrefix(Self.advertisementRoot + "/") { return answerAdvertisement(call, path: path, connection: c) }
        guard path.hasPrefix(Self.monitorRoot),
            let reply = dbus_message_new_method_return(call.raw)
        else { return }
        defer { dbus_message_unref(reply) }
        if call.member == "GetManagedObjects" { Self.writeManagedObjects(reply) }
        // Release, Activate, DeviceFound, DeviceLost: nothing to do beyond acknowledging;
        // the advertisements arrive as Device1 property changes, as in active scanning.
        c.send(reply)
    }

    /// {monitorPath: {AdvertisementMonitor1: {Type: "or_patterns", Patterns: a(yyay)}}}.
    static func writeManagedObjects(_ reply: OpaquePointer) {
        var root = MessageWriter(reply)
        root.openContainer(BEACOND_DBUS_TYPE_ARRAY, "{oa{sa{sv}}}") { objects in
            objects.openContainer(BEACOND_DBUS_TYPE_DICT_ENTRY, nil) { entry in
                entry.appendObjectPath(monitorPath)
                entry.openContainer(BEACOND_DBUS_TYPE_ARRAY, "{sa{sv}}") { interfaces in
                    interfaces.openContainer(BEACOND_DBUS_TYPE_DICT_ENTRY, nil) { i in
                        i.append(monitorInterface)
                        i.openContainer(BEACOND_DBUS_TYPE_ARRAY, "{sv}") { props in
                            props.appendEntry("Type", "s") { $0.append("or_patterns") }
                            props.appendEntry("Patterns", "a(yyay)") { v in
                                v.openContainer(BEACOND_DBUS_TYPE_ARRAY, "(yyay)") { list in
                                    for (start, type, content) in monitorPatterns {
                                        list.openContainer(BEACOND_DBUS_TYPE_STRUCT, nil) { s in
                                            s.appendByte(start)
                                            s.appendByte(type)
                                            s.appendBytes(content)
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
