import CDBus

/// Appends arguments to a message being built (method-call arguments).
struct MessageWriter {
    fileprivate(set) var iter = DBusMessageIter()

    init(_ message: OpaquePointer) {
        dbus_message_iter_init_append(message, &iter)
    }

    init(sub: DBusMessageIter) { iter = sub }

    mutating func append(_ s: String) {
        s.withCString { pointer in
            var p: UnsafePointer<CChar>? = pointer
            _ = dbus_message_iter_append_basic(&iter, BEACOND_DBUS_TYPE_STRING, &p)
        }
    }

    mutating func appendObjectPath(_ s: String) {
        s.withCString { pointer in
            var p: UnsafePointer<CChar>? = pointer
            _ = dbus_message_iter_append_basic(&iter, BEACOND_DBUS_TYPE_OBJECT_PATH, &p)
        }
    }

    /// An `a{sv}` dictionary of simple values, as BlueZ's SetDiscoveryFilter takes.
    mutating func appendDictionary(_ entries: [(String, DBusSimpleValue)]) {
        var array = DBusMessageIter()
        dbus_message_iter_open_container(&iter, BEACOND_DBUS_TYPE_ARRAY, "{sv}", &array)
        for (key, value) in entries {
            var entry = DBusMessageIter()
            dbus_message_iter_open_container(&array, BEACOND_DBUS_TYPE_DICT_ENTRY, nil, &entry)
            var keyWriter = MessageWriter(sub: entry)
            keyWriter.append(key)
            entry = keyWriter.iter
            var variant = DBusMessageIter()
            dbus_message_iter_open_container(&entry, BEACOND_DBUS_TYPE_VARIANT, value.signature, &variant)
            var valueWriter = MessageWriter(sub: variant)
            valueWriter.append(value)
            variant = valueWriter.iter
            dbus_message_iter_close_container(&entry, &variant)
            dbus_message_iter_close_container(&array, &entry)
        }
        dbus_message_iter_close_container(&iter, &array)
    }

    /// Opens a container, lets `body` fill it, and closes it.
    mutating func openContainer(_ type: Int32, _ signature: String?, _ body: (inout MessageWriter) -> Void) {
        var sub = DBusMessageIter()
        dbus_message_iter_open_container(&iter, type, signature, &sub)
        var writer = MessageWriter(sub: sub)
        body(&writer)
        sub = writer.iter
        dbus_message_iter_close_container(&iter, &sub)
    }

    mutating func appendByte(_ value: UInt8) {
        var v = value
        _ = dbus_message_iter_append_basic(&iter, BEACOND_DBUS_TYPE_BYTE, &v)
    }

    /// An `ay`.
    mutating func appendBytes(_ bytes: [UInt8]) {
        openContainer(BEACOND_DBUS_TYPE_ARRAY, "y") { array in
            bytes.withUnsafeBufferPointer { buffer in
                var base: UnsafePointer<UInt8>? = buffer.baseAddress
                _ = dbus_message_iter_append_fixed_array(
                    &array.iter, BEACOND_DBUS_TYPE_BYTE, &base, Int32(buffer.count))
            }
        }
    }

    /// A single variant, as `org.freedesktop.DBus.Properties.Set` takes its value.
    mutating func appendVariant(_ value: DBusSimpleValue) {
        var variant = DBusMessageIter()
        dbus_message_iter_open_container(&iter, BEACOND_DBUS_TYPE_VARIANT, value.signature, &variant)
        var writer = MessageWriter(sub: variant)
        writer.append(value)
        variant = writer.iter
        dbus_message_iter_close_container(&iter, &variant)
    }

    mutating func append(_ value: DBusSimpleValue) {
        switch value {
        case let .string(s): append(s)
        case let .bool(b):
            var v: dbus_bool_t = b ? 1 : 0
            _ = dbus_message_iter_append_basic(&iter, BEACOND_DBUS_TYPE_BOOLEAN, &v)
        case let .int16(n):
            var v = n
            _ = dbus_message_iter_append_basic(&iter, BEACOND_DBUS_TYPE_INT16, &v)
        }
    }
}

/// The few value types beacond sends to BlueZ.
enum DBusSimpleValue {
    case string(String)
    case bool(Bool)
    case int16(Int16)

    var signature: String {
        switch self {
        case .string: return "s"
        case .bool: return "b"
        case .int16: return "n"
        }
    }
}

extension MessageWriter {
    /// Device1 properties as bluetoothd sends them, for tests and benchmarks of the parsers.
    mutating func appendTestProperties(payload: [UInt8]) {
        var array = DBusMessageIter()
        dbus_message_iter_open_container(&iter, BEACOND_DBUS_TYPE_ARRAY, "{sv}", &array)
        func entry(_ key: String, _ signature: String, _ body: (inout DBusMessageIter) -> Void) {
            var e = DBusMessageIter()
            dbus_message_iter_open_container(&array, BEACOND_DBUS_TYPE_DICT_ENTRY, nil, &e)
            var k = MessageWriter(sub: e)
            k.append(key)
            e = k.iter
            var v = DBusMessageIter()
            dbus_message_iter_open_container(&e, BEACOND_DBUS_TYPE_VARIANT, signature, &v)
            body(&v)
            dbus_message_iter_close_container(&e, &v)
            dbus_message_iter_close_container(&array, &e)
        }
        func bytes(_ it: inout DBusMessageIter, _ data: [UInt8]) {
            var a = DBusMessageIter()
            dbus_message_iter_open_container(&it, BEACOND_DBUS_TYPE_ARRAY, "y", &a)
            data.withUnsafeBufferPointer { buffer in
                var base: UnsafePointer<UInt8>? = buffer.baseAddress
                _ = dbus_message_iter_append_fixed_array(&a, BEACOND_DBUS_TYPE_BYTE, &base, Int32(buffer.count))
            }
            dbus_message_iter_close_container(&it, &a)
        }
        entry("UUIDs", "as") { v in
            var a = DBusMessageIter()
            dbus_message_iter_open_container(&v, BEACOND_DBUS_TYPE_ARRAY, "s", &a)
            var w = MessageWriter(sub: a)
            w.append("0000feaa-0000-1000-8000-00805f9b34fb")
            a = w.iter
            dbus_message_iter_close_container(&v, &a)
        }
        entry("RSSI", "n") { v in
            var w = MessageWriter(sub: v)
            w.append(.int16(-67))
            v = w.iter
        }
        entry("ManufacturerData", "a{qv}") { v in
            var a = DBusMessageIter()
            dbus_message_iter_open_container(&v, BEACOND_DBUS_TYPE_ARRAY, "{qv}", &a)
            var e = DBusMessageIter()
            dbus_message_iter_open_container(&a, BEACOND_DBUS_TYPE_DICT_ENTRY, nil, &e)
            var company: UInt16 = 0x004C
            dbus_message_iter_append_basic(&e, BEACOND_DBUS_TYPE_UINT16, &company)
            var inner = DBusMessageIter()
            dbus_message_iter_open_container(&e, BEACOND_DBUS_TYPE_VARIANT, "ay", &inner)
            bytes(&inner, payload)
            dbus_message_iter_close_container(&e, &inner)
            dbus_message_iter_close_container(&a, &e)
            dbus_message_iter_close_container(&v, &a)
        }
        entry("ServiceData", "a{sv}") { v in
            var a = DBusMessageIter()
            dbus_message_iter_open_container(&v, BEACOND_DBUS_TYPE_ARRAY, "{sv}", &a)
            var e = DBusMessageIter()
            dbus_message_iter_open_container(&a, BEACOND_DBUS_TYPE_DICT_ENTRY, nil, &e)
            var w = MessageWriter(sub: e)
            w.append("0000feaa-0000-1000-8000-00805f9b34fb")
            e = w.iter
            var inner = DBusMessageIter()
            dbus_message_iter_open_container(&e, BEACOND_DBUS_TYPE_VARIANT, "ay", &inner)
            bytes(&inner, [0, 0xE7])
            dbus_message_iter_close_container(&e, &inner)
            dbus_message_iter_close_container(&a, &e)
            dbus_message_iter_close_container(&v, &a)
        }
        entry("Name", "s") { v in
            var w = MessageWriter(sub: v)
            w.append("tag")
            v = w.iter
        }
        entry("Paired", "b") { v in
            var w = MessageWriter(sub: v)
            w.append(.bool(true))
            v = w.iter
        }
        dbus_message_iter_close_container(&iter, &array)
        var empty = DBusMessageIter()
        dbus_message_iter_open_container(&iter, BEACOND_DBUS_TYPE_ARRAY, "s", &empty)
        dbus_message_iter_close_container(&iter, &empty)
    }
}
