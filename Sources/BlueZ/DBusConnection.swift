import CDBus

#if canImport(Glibc)
    import Glibc
#endif

/// A libdbus failure, with the D-Bus error name and message, and what was being done.
public struct DBusFailure: Error, Sendable, CustomStringConvertible {
    public var name: String
    public var message: String
    public var context: String

    init(_ error: inout DBusError, context: String) {
        name = error.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
        message = error.message.map { String(cString: $0) } ?? "unknown error"
        self.context = context
        dbus_error_free(&error)
    }

    init(name: String, message: String, context: String) {
        self.name = name
        self.message = message
        self.context = context
    }

    public var description: String { "\(context): \(name): \(message)" }
}

/// One private connection to the system bus (`DBUS_SYSTEM_BUS_ADDRESS` is honoured by
/// libdbus itself, which is how tests point it at a private bus).
///
/// Used from one thread only, the scanner's: libdbus is thread-safe, but keeping every read,
/// dispatch and call on one thread means a blocking call never waits behind another
/// thread's poll. `@unchecked Sendable` because the handle is moved to that thread once.
final class DBusConnection: @unchecked Sendable {
    let raw: OpaquePointer

    init() throws(DBusFailure) {
        var error = DBusError()
        dbus_error_init(&error)
        guard let connection = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error) else {
            throw DBusFailure(&error, context: "connecting to the system bus")
        }
        raw = connection
        dbus_connection_set_exit_on_disconnect(raw, 0)
    }

    deinit {
        dbus_connection_close(raw)
        dbus_connection_unref(raw)
    }

    /// The socket, for polling together with other descriptors.
    var fileDescriptor: Int32 {
        var fd: Int32 = -1
        dbus_connection_get_unix_fd(raw, &fd)
        return fd
    }

    func addMatch(_ rule: String) throws(DBusFailure) {
        var error = DBusError()
        dbus_error_init(&error)
        dbus_bus_add_match(raw, rule, &error)
        if dbus_error_is_set(&error) != 0 { throw DBusFailure(&error, context: "adding match \(rule)") }
    }

    /// Reads and writes for up to `timeoutMs`; false once the bus connection is gone.
    func readWrite(timeoutMs: Int32) -> Bool {
        dbus_connection_read_write(raw, timeoutMs) != 0
    }

    /// The next queued incoming message, if any.
    func pop() -> DBusMessageRef? {
        dbus_connection_pop_message(raw).map(DBusMessageRef.init(taking:))
    }

    /// Queues a message (a reply) for sending; the loop's next read-write flushes it.
    func send(_ message: OpaquePointer) {
        dbus_connection_send(raw, message, nil)
        dbus_connection_flush(raw)
    }

    /// Calls a method and waits for the reply (other messages arriving meanwhile stay queued).
    func call(
        destination: String, path: String, interface: String, method: String, timeoutMs: Int32 = 5000,
        arguments: (inout MessageWriter) -> Void = { _ in }
    ) throws(DBusFailure) -> DBusMessageRef {
        guard let message = dbus_message_new_method_call(destination, path, interface, method) else {
            throw DBusFailure(name: "org.freedesktop.DBus.Error.NoMemory", message: "out of memory", context: method)
        }
        defer { dbus_message_unref(message) }
        var writer = MessageWriter(message)
        arguments(&writer)
        var error = DBusError()
        dbus_error_init(&error)
        guard let reply = dbus_connection_send_with_reply_and_block(raw, message, timeoutMs, &error) else {
            throw DBusFailure(&error, context: "\(interface).\(method) on \(path)")
        }
        return DBusMessageRef(taking: reply)
    }
}

/// Owns one reference to a `DBusMessage`.
final class DBusMessageRef: @unchecked Sendable {
    let raw: OpaquePointer

    init(taking raw: OpaquePointer) { self.raw = raw }
    deinit { dbus_message_unref(raw) }

    var isSignal: Bool { dbus_message_get_type(raw) == DBUS_MESSAGE_TYPE_SIGNAL }
    var member: String? { dbus_message_get_member(raw).map { String(cString: $0) } }
    var path: String? { dbus_message_get_path(raw).map { String(cString: $0) } }

    /// True when this signal has this interface and member (compared without building Strings).
    func isSignal(_ interface: StaticString, _ member: StaticString) -> Bool {
        guard isSignal, let i = dbus_message_get_interface(raw), let m = dbus_message_get_member(raw) else {
            return false
        }
        return strcmp(i, UnsafeRawPointer(interface.utf8Start).assumingMemoryBound(to: CChar.self)) == 0
            && strcmp(m, UnsafeRawPointer(member.utf8Start).assumingMemoryBound(to: CChar.self)) == 0
    }

    var reader: MessageReader { MessageReader(self) }
}
