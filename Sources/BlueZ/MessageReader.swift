import CDBus

/// Reads the arguments of a message with libdbus's iterator, one typed value at a time.
///
/// Every read checks the argument's type first and returns nil on a mismatch, so a message
/// of an unexpected shape (a mock's mistyped property, a future BlueZ) is skipped, never
/// trusted. The message must outlive the reader.
struct MessageReader {
    private(set) var iter = DBusMessageIter()
    private let message: DBusMessageRef?

    init(_ message: DBusMessageRef) {
        self.message = message
        dbus_message_iter_init(message.raw, &iter)
    }

    private init(sub: DBusMessageIter, keeping message: DBusMessageRef?) {
        self.iter = sub
        self.message = message
    }

    var isAtEnd: Bool {
        var copy = iter
        return dbus_message_iter_get_arg_type(&copy) == BEACOND_DBUS_TYPE_INVALID
    }

    var argType: Int32 {
        var copy = iter
        return dbus_message_iter_get_arg_type(&copy)
    }

    /// The element type of the array at the cursor.
    var elementType: Int32 {
        var copy = iter
        return dbus_message_iter_get_element_type(&copy)
    }

    @discardableResult
    mutating func next() -> Bool { dbus_message_iter_next(&iter) != 0 }

    /// Enters the container (array, variant, dict entry, struct) at the cursor.
    func recurse() -> MessageReader {
        var copy = iter
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&copy, &sub)
        return MessageReader(sub: sub, keeping: message)
    }

    /// A fixed-size basic value: libdbus writes its bytes into `value`, which therefore must be
    /// plain bytes (hence `BitwiseCopyable`).
    private func basic<T: BitwiseCopyable>(_ expected: Int32, _ initial: T) -> T? {
        var copy = iter
        guard dbus_message_iter_get_arg_type(&copy) == expected else { return nil }
        var value = initial
        dbus_message_iter_get_basic(&copy, &value)
        return value
    }

    func string() -> String? {
        var copy = iter
        let t = dbus_message_iter_get_arg_type(&copy)
        guard t == BEACOND_DBUS_TYPE_STRING || t == BEACOND_DBUS_TYPE_OBJECT_PATH else { return nil }
        var pointer: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&copy, &pointer)
        return pointer.map { String(cString: $0) }
    }

    func int16() -> Int16? { basic(BEACOND_DBUS_TYPE_INT16, Int16(0)) }
    func int32() -> Int32? { basic(BEACOND_DBUS_TYPE_INT32, Int32(0)) }
    func uint16() -> UInt16? { basic(BEACOND_DBUS_TYPE_UINT16, UInt16(0)) }
    func bool() -> Bool? { basic(BEACOND_DBUS_TYPE_BOOLEAN, dbus_bool_t(0)).map { $0 != 0 } }

    /// An `ay` at the cursor, copied out in one go (libdbus hands out fixed arrays directly).
    func bytes() -> [UInt8]? {
        guard argType == BEACOND_DBUS_TYPE_ARRAY, elementType == BEACOND_DBUS_TYPE_BYTE else { return nil }
        var sub = recurse().iter
        var pointer: UnsafeMutableRawPointer? = nil
        var count: Int32 = 0
        dbus_message_iter_get_fixed_array(&sub, &pointer, &count)
        guard let pointer, count > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: Int(count)))
    }

    /// Calls `body` with each element of the array at the cursor.
    func forEachElement(_ body: (MessageReader) -> Void) {
        guard argType == BEACOND_DBUS_TYPE_ARRAY else { return }
        var element = recurse()
        while !element.isAtEnd {
            body(element)
            element.next()
        }
    }

    /// Like `forEachStringKeyed`, but hands out the key as the message's own C string, so
    /// a hot path can compare keys without building a String for each one.
    func forEachRawKeyed(_ body: (UnsafePointer<CChar>, MessageReader) -> Void) {
        guard argType == BEACOND_DBUS_TYPE_ARRAY, elementType == BEACOND_DBUS_TYPE_DICT_ENTRY else { return }
        forEachElement { entry in
            var kv = entry.recurse()
            var copy = kv.iter
            guard dbus_message_iter_get_arg_type(&copy) == BEACOND_DBUS_TYPE_STRING else { return }
            var pointer: UnsafePointer<CChar>? = nil
            dbus_message_iter_get_basic(&copy, &pointer)
            guard let key = pointer else { return }
            kv.next()
            body(key, kv.argType == BEACOND_DBUS_TYPE_VARIANT ? kv.recurse() : kv)
        }
    }

    /// For an `a{s…}` at the cursor: calls `body` with each key and a reader on its value
    /// (unwrapped when it is a variant).
    func forEachStringKeyed(_ body: (String, MessageReader) -> Void) {
        guard argType == BEACOND_DBUS_TYPE_ARRAY, elementType == BEACOND_DBUS_TYPE_DICT_ENTRY else { return }
        forEachElement { entry in
            var kv = entry.recurse()
            guard let key = kv.string() else { return }
            kv.next()
            body(key, kv.argType == BEACOND_DBUS_TYPE_VARIANT ? kv.recurse() : kv)
        }
    }
}
