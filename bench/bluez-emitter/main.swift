// A fast stand-in for bluetoothd, for the D-Bus ingest benchmark (BENCHMARKS.md): owns
// org.bluez on the bus DBUS_SYSTEM_BUS_ADDRESS names, answers the calls a scanner makes
// (GetManagedObjects with one powered adapter, SetDiscoveryFilter, StartDiscovery), and
// each time the file named by --trigger appears, deletes it and emits --count
// PropertiesChanged signals (RSSI + iBeacon ManufacturerData, over 1,000 devices) as fast
// as the bus takes them, then prints "emitted N in S s".
//   bluez-emitter --count 100000 --trigger /tmp/go

import BlueZ
import BlueZFixtures
import CDBus

#if canImport(Glibc)
    import Glibc
#endif

func argument(_ name: String, _ fallback: String) -> String {
    let args = CommandLine.arguments
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return fallback }
    return args[i + 1]
}

let count = Int(argument("--count", "100000")) ?? 100_000
let trigger = argument("--trigger", "/tmp/bluez-emitter-go")

var error = DBusError()
dbus_error_init(&error)
guard let bus = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error) else {
    fputs("bluez-emitter: cannot connect to the system bus\n", stderr)
    exit(1)
}
guard
    dbus_bus_request_name(bus, "org.bluez", UInt32(DBUS_NAME_FLAG_DO_NOT_QUEUE), &error)
        == DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER
else {
    fputs("bluez-emitter: cannot own org.bluez\n", stderr)
    exit(1)
}

func appendString(_ iter: inout DBusMessageIter, _ s: String, type: Int32 = BEACOND_DBUS_TYPE_STRING) {
    s.withCString { p in
        var ptr: UnsafePointer<CChar>? = p
        dbus_message_iter_append_basic(&iter, type, &ptr)
    }
}

/// {o: {s: {s: v}}} with /org/bluez/hci0 -> org.bluez.Adapter1 -> Powered true, Discovering false.
func managedObjectsReply(to call: OpaquePointer) -> OpaquePointer {
    let reply = dbus_message_new_method_return(call)!
    var it = DBusMessageIter()
    dbus_message_iter_init_append(reply, &it)
    var objects = DBusMessageIter()
    dbus_message_iter_open_container(&it, BEACOND_DBUS_TYPE_ARRAY, "{oa{sa{sv}}}", &objects)
    var entry = DBusMessageIter()
    dbus_message_iter_open_container(&objects, BEACOND_DBUS_TYPE_DICT_ENTRY, nil, &entry)
    appendString(&entry, "/org/bluez/hci0", type: BEACOND_DBUS_TYPE_OBJECT_PATH)
    var interfaces = DBusMessageIter()
    dbus_message_iter_open_container(&entry, BEACOND_DBUS_TYPE_ARRAY, "{sa{sv}}", &interfaces)
    var ientry = DBusMessageIter()
    dbus_message_iter_open_container(&interfaces, BEACOND_DBUS_TYPE_DICT_ENTRY, nil, &ientry)
    appendString(&ientry, "org.bluez.Adapter1")
    var props = DBusMessageIter()
    dbus_message_iter_open_container(&ientry, BEACOND_DBUS_TYPE_ARRAY, "{sv}", &props)
    for (key, value) in [("Powered", true), ("Discovering", false)] {
        var p = DBusMessageIter()
        dbus_message_iter_open_container(&props, BEACOND_DBUS_TYPE_DICT_ENTRY, nil, &p)
        appendString(&p, key)
        var v = DBusMessageIter()
        dbus_message_iter_open_container(&p, BEACOND_DBUS_TYPE_VARIANT, "b", &v)
        var b: dbus_bool_t = value ? 1 : 0
        dbus_message_iter_append_basic(&v, BEACOND_DBUS_TYPE_BOOLEAN, &b)
        dbus_message_iter_close_container(&p, &v)
        dbus_message_iter_close_container(&props, &p)
    }
    dbus_message_iter_close_container(&ientry, &props)
    dbus_message_iter_close_container(&interfaces, &ientry)
    dbus_message_iter_close_container(&entry, &interfaces)
    dbus_message_iter_close_container(&objects, &entry)
    dbus_message_iter_close_container(&it, &objects)
    return reply
}

/// PropertiesChanged("org.bluez.Device1", {RSSI: n, ManufacturerData: {0x004C: iBeacon}}, []).
func advertisement(device: Int, rssi: Int16) -> OpaquePointer {
    var payload: [UInt8] = [
        0x02, 0x15, 0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0,
    ]
    payload += [0x00, UInt8(device % 50), UInt8(device >> 8), UInt8(device & 0xFF), 0xC5]
    return DeviceSignalFixture.propertiesChanged(
        path: "/org/bluez/hci0/dev_C3_11_22_33_" + hex2(device >> 8) + "_" + hex2(device & 0xFF), rssi: rssi,
        manufacturerData: [(0x004C, payload)])
}

func hex2(_ v: Int) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[(v >> 4) & 0xF], digits[v & 0xF]])
}

func serveCalls() {
    while let message = dbus_connection_pop_message(bus) {
        defer { dbus_message_unref(message) }
        guard dbus_message_get_type(message) == DBUS_MESSAGE_TYPE_METHOD_CALL else { continue }
        let member = dbus_message_get_member(message).map { String(cString: $0) } ?? ""
        let reply =
            member == "GetManagedObjects" ? managedObjectsReply(to: message) : dbus_message_new_method_return(message)!
        dbus_connection_send(bus, reply, nil)
        dbus_message_unref(reply)
    }
}

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

// Prebuilt signals, one per device and RSSI step; sending copies so each gets its own serial.
let templates = (0..<1000).map { advertisement(device: $0, rssi: Int16(-60 - $0 % 30)) }
print("ready")
fflush(stdout)
while true {
    _ = dbus_connection_read_write(bus, 20)
    serveCalls()
    guard access(trigger, F_OK) == 0 else { continue }
    unlink(trigger)
    let start = now()
    for i in 0..<count {
        let copy = dbus_message_copy(templates[i % templates.count])!
        dbus_connection_send(bus, copy, nil)
        dbus_message_unref(copy)
        if i % 256 == 255 {
            dbus_connection_flush(bus)
            serveCalls()
        }
    }
    dbus_connection_flush(bus)
    print("emitted \(count) in \(now() - start) s")
    fflush(stdout)
}
