import CDBus

#if canImport(Glibc)
    import Glibc
#endif

/// A second, receive-only connection to the system bus that carries the flood of Device1
/// `PropertiesChanged` signals, read by beacond itself.
///
/// libdbus reads at most 2 KiB per iteration (about 8 advertisements) and takes its
/// connection locks for every message; under a flood that is most of the cost of ingest
/// (BENCHMARKS.md). Here the socket is read 64 KiB at a time and each Device1 PropertiesChanged is
/// parsed from its wire bytes (`DeviceSignal`); dbus-daemon has validated it before routing. The connection is
/// set up by hand — SASL EXTERNAL, `Hello`, `AddMatch` — so no byte of the stream ever passes
/// through a libdbus connection's buffer. Calls and the low-volume signals stay on the
/// libdbus `DBusConnection`.
final class SignalStream {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private var serial: UInt32 = 0
    static let readSize = 64 * 1024

    /// Connects, authenticates and subscribes to `rule`; nil (with the reason) on failure.
    init(rule: String) throws(DBusFailure) {
        let address = Self.socketAddress()
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Self.failure("socket", address.description) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let path = Array(address.path.utf8)
        guard path.count < MemoryLayout.size(ofValue: addr.sun_path) else {
            close(fd)
            throw Self.failure("address too long", address.description)
        }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            let offset = address.abstract ? 1 : 0
            for (i, b) in path.enumerated() { raw[i + offset] = b }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (address.abstract ? 1 : 1))
        let connected = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        guard connected == 0 else {
            let f = Self.failure("connect", address.description)
            close(fd)
            throw f
        }
        do {
            try authenticate()
            try send(method: "Hello", arguments: nil)
            try send(method: "AddMatch", arguments: rule)
        } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(fd) }

    var fileDescriptor: Int32 { fd }

    private static func failure(_ what: String, _ address: String) -> DBusFailure {
        DBusFailure(
            name: "org.freedesktop.DBus.Error.NoServer", message: "\(what): \(String(cString: strerror(errno)))",
            context: "signal connection to \(address)")
    }

    /// The system bus socket from `DBUS_SYSTEM_BUS_ADDRESS` (first `unix:` entry), else the default.
    static func socketAddress() -> (path: String, abstract: Bool, description: String) {
        let env = getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) } ?? ""
        for entry in env.split(separator: ";") where entry.hasPrefix("unix:") {
            for pair in entry.dropFirst(5).split(separator: ",") {
                if pair.hasPrefix("path=") { return (String(pair.dropFirst(5)), false, String(entry)) }
                if pair.hasPrefix("abstract=") { return (String(pair.dropFirst(9)), true, String(entry)) }
            }
        }
        return ("/run/dbus/system_bus_socket", false, "unix:path=/run/dbus/system_bus_socket")
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws(DBusFailure) {
        var offset = 0
        while offset < bytes.count {
            let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw Self.failure("write", "bus")
            }
            offset += n
        }
    }

    private func writeAll(_ bytes: [UInt8]) throws(DBusFailure) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Self.failure("write", "bus")
            }
            offset += n
        }
    }

    /// SASL EXTERNAL with our uid, as every D-Bus client on a Unix socket does.
    private func authenticate() throws(DBusFailure) {
        let uid = String(getuid())
        let hexUID = uid.utf8.map { String($0, radix: 16) }.joined()
        var hello: [UInt8] = [0]
        hello += Array("AUTH EXTERNAL \(hexUID)\r\n".utf8)
        try writeAll(hello)
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < 512 {
            let n = read(fd, &byte, 1)
            guard n == 1 else { throw Self.failure("authentication", "bus") }
            if byte == 0x0A { break }
            line.append(byte)
        }
        guard line.starts(with: Array("OK ".utf8)) else {
            throw DBusFailure(
                name: "org.freedesktop.DBus.Error.AuthFailed", message: String(decoding: line, as: UTF8.self),
                context: "signal connection")
        }
        try writeAll(Array("BEGIN\r\n".utf8))
    }

    /// Sends a call to the bus itself; its reply is skipped when it arrives in the stream.
    private func send(method: String, arguments: String?) throws(DBusFailure) {
        guard
            let message = dbus_message_new_method_call(
                "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", method)
        else { throw DBusFailure(name: "org.freedesktop.DBus.Error.NoMemory", message: "", context: method) }
        defer { dbus_message_unref(message) }
        serial += 1
        dbus_message_set_serial(message, serial)
        dbus_message_set_no_reply(message, 0)
        if let arguments {
            var writer = MessageWriter(message)
            writer.append(arguments)
        }
        var marshalled: UnsafeMutablePointer<CChar>? = nil
        var length: Int32 = 0
        guard dbus_message_marshal(message, &marshalled, &length) != 0, let marshalled else {
            throw DBusFailure(name: "org.freedesktop.DBus.Error.NoMemory", message: "", context: method)
        }
        defer { dbus_free(marshalled) }
        try writeAll(UnsafeRawBufferPointer(start: marshalled, count: Int(length)))
    }

    /// Reads what the socket has (it must be readable, or this blocks) and hands every
    /// complete Device1 PropertiesChanged to `body`; other messages (the bus's own replies
    /// and NameAcquired) are skipped. False when the connection is closed or corrupt.
    func receive(_ body: (DeviceSignal) -> Void) -> Bool {
        if start > 0 {
            // What is left is at most one partial message: move it to the front.
            buffer.removeSubrange(0..<start)
            start = 0
        }
        let old = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: Self.readSize))
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + old, Self.readSize) }
        buffer.removeLast(Self.readSize - max(0, n))
        if n < 0 { return errno == EINTR || errno == EAGAIN }
        if n == 0 { return false }
        return buffer.withUnsafeBytes { raw -> Bool in
            while true {
                let rest = UnsafeRawBufferPointer(rebasing: raw[start...])
                guard let length = DeviceSignal.messageLength(rest) else { return true }
                guard length <= Self.maxMessage else { return false }
                guard length <= rest.count else { return true }
                if let signal = DeviceSignal.parse(UnsafeRawBufferPointer(rebasing: rest[0..<length])) { body(signal) }
                start += length
            }
        }
    }

    /// D-Bus's own limit on a message (128 MiB); a longer length means a corrupt stream.
    static let maxMessage = 128 * 1024 * 1024
}
