import CDBus

/// Appends arguments to a message being built (method-call arguments, replies, signals).
package struct MessageWriter {
    fileprivate(set) var iter = DBusMessageIter()

    package init(_ message: OpaquePointer) {
        dbus_message_iter_init_append(message, &iter)
    }

    package init(sub: DBusMessageIter) { iter = sub }

    /// Opens a container, lets `body` fill it, and closes it.
    package mutating func openContainer(_ type: Int32, _ signature: String?, _ body: (inout MessageWriter) -> Void) {
        var sub = DBusMessageIter()
        dbus_message_iter_open_container(&iter, type, signature, &sub)
        var writer = MessageWriter(sub: sub)
        body(&writer)
        sub = writer.iter
        dbus_message_iter_close_container(&iter, &sub)
    }

    package mutating func append(_ s: String) { appendString(s, type: BEACOND_DBUS_TYPE_STRING) }
    package mutating func appendObjectPath(_ s: String) { appendString(s, type: BEACOND_DBUS_TYPE_OBJECT_PATH) }

    private mutating func appendString(_ s: String, type: Int32) {
        s.withCString { pointer in
            var p: UnsafePointer<CChar>? = pointer
            _ = dbus_message_iter_append_basic(&iter, type, &p)
        }
    }

    package mutating func appendByte(_ value: UInt8) {
        var v = value
        _ = dbus_message_iter_append_basic(&iter, BEACOND_DBUS_TYPE_BYTE, &v)
    }

    package mutating func appendUInt16(_ value: UInt16) {
        var v = value
        _ = dbus_message_iter_append_basic(&iter, BEACOND_DBUS_TYPE_UINT16, &v)
    }

    /// An `ay`.
    package mutating func appendBytes(_ bytes: [UInt8]) {
        openContainer(BEACOND_DBUS_TYPE_ARRAY, "y") { array in
            bytes.withUnsafeBufferPointer { buffer in
                var base: UnsafePointer<UInt8>? = buffer.baseAddress
                _ = dbus_message_iter_append_fixed_array(
                    &array.iter, BEACOND_DBUS_TYPE_BYTE, &base, Int32(buffer.count))
            }
        }
    }

    /// One `{key: variant}` entry of an `a{sv}`, whose value `body` writes.
    package mutating func appendEntry(_ key: String, _ signature: String, _ body: (inout MessageWriter) -> Void) {
        openContainer(BEACOND_DBUS_TYPE_DICT_ENTRY, nil) { entry in
            entry.append(key)
            entry.openContainer(BEACOND_DBUS_TYPE_VARIANT, signature, body)
        }
    }

    /// An `a{sv}` dictionary of simple values, as BlueZ's SetDiscoveryFilter takes.
    package mutating func appendDictionary(_ entries: [(String, DBusSimpleValue)]) {
        openContainer(BEACOND_DBUS_TYPE_ARRAY, "{sv}") { array in
            for (key, value) in entries { array.appendEntry(key, value.signature) { $0.append(value) } }
        }
    }

    /// A single variant, as `org.freedesktop.DBus.Properties.Set` takes its value.
    package mutating func appendVariant(_ value: DBusSimpleValue) {
        openContainer(BEACOND_DBUS_TYPE_VARIANT, value.signature) { $0.append(value) }
    }

    package mutating func append(_ value: DBusSimpleValue) {
        switch value {
        case let .string(s): append(s)
        case let .bool(b):
            var v: dbus_bool_t = b ? 1 : 0
            _ = dbus_message_iter_append_basic(&iter, BEACOND_DBUS_TYPE_BOOLEAN, &v)
        case let .int16(n):
            var v = n
            _ = dbus_message_iter_append_basic(&iter, BEACOND_DBUS_TYPE_INT16, &v)
        case let .int32(n):
            var v = n
            _ = dbus_message_iter_append_basic(&iter, BEACOND_DBUS_TYPE_INT32, &v)
        case let .uint32(n):
            var v = n
            _ = dbus_message_iter_append_basic(&iter, BEACOND_DBUS_TYPE_UINT32, &v)
        }
    }
}

/// The few value types beacond sends to BlueZ (and Avahi).
package enum DBusSimpleValue {
    case string(String)
    case bool(Bool)
    case int16(Int16)
    case int32(Int32)
    case uint32(UInt32)

    var signature: String {
        switch self {
        case .string: return "s"
        case .bool: return "b"
        case .int16: return "n"
        case .int32: return "i"
        case .uint32: return "u"
        }
    }
}
