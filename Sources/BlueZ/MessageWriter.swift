import CDBus

/// Appends arguments to a message being built (method-call arguments).
struct MessageWriter {
    private var iter = DBusMessageIter()

    init(_ message: OpaquePointer) {
        dbus_message_iter_init_append(message, &iter)
    }

    private init(sub: DBusMessageIter) { iter = sub }

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
