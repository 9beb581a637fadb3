import BeaconCore

/// The little of Protocol Buffers' wire format that ESPHome's native API needs: varints,
/// length-delimited fields, and nothing generated.
///
/// Why by hand: the API's messages are few and flat, swift-protobuf's plugin is a build step
/// of its own, and a reader here is bounded — a field's length is checked against what the
/// frame holds before anything is read from it.
struct ProtobufWriter {
    private(set) var bytes: [UInt8] = []

    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func uint(_ field: Int, _ value: UInt64) {
        guard value != 0 else { return }  // proto3: a default is not written
        varint(UInt64(field << 3))
        varint(value)
    }

    mutating func bool(_ field: Int, _ value: Bool) { uint(field, value ? 1 : 0) }

    mutating func bytes(_ field: Int, _ value: some Collection<UInt8>) {
        guard !value.isEmpty else { return }
        varint(UInt64(field << 3 | 2))
        varint(UInt64(value.count))
        bytes += value
    }

    mutating func string(_ field: Int, _ value: String) { bytes(field, Array(value.utf8)) }

    /// A message field, written through `body`.
    mutating func message(_ field: Int, _ body: (inout ProtobufWriter) -> Void) {
        var inner = ProtobufWriter()
        body(&inner)
        varint(UInt64(field << 3 | 2))
        varint(UInt64(inner.bytes.count))
        bytes += inner.bytes
    }
}

/// A message's fields in order, each a varint or a slice of the message's bytes.
struct ProtobufReader {
    enum Value {
        case varint(UInt64)
        case bytes(ArraySlice<UInt8>)
        case fixed
    }

    enum Problem: Error, Equatable, CustomStringConvertible {
        case truncated(at: Int)
        case badWireType(Int, at: Int)
        case tooMany(Int)
        var description: String {
            switch self {
            case let .tooMany(n): return "more than \(n) repeated entries in one message"
            case let .truncated(at): return "a protobuf field at byte \(at) runs past the message"
            case let .badWireType(t, at): return "protobuf wire type \(t) at byte \(at)"
            }
        }
    }

    let bytes: ArraySlice<UInt8>
    private var at: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        at = bytes.startIndex
    }

    /// The next field, or nil at the end.
    mutating func next() throws(Problem) -> (field: Int, value: Value)? {
        guard at < bytes.endIndex else { return nil }
        let start = at
        let key = try varint()
        let field = Int(truncatingIfNeeded: key >> 3)
        switch Int(key & 7) {
        case 0: return (field, .varint(try varint()))
        case 1: return try skip(8, field: field)
        case 5: return try skip(4, field: field)
        case 2:
            let length = try varint()
            guard length <= UInt64(bytes.endIndex - at) else { throw .truncated(at: start) }
            let slice = bytes[at..<(at + Int(length))]
            at += Int(length)
            return (field, .bytes(slice))
        case let other: throw .badWireType(other, at: start)
        }
    }

    private mutating func skip(_ n: Int, field: Int) throws(Problem) -> (field: Int, value: Value) {
        guard bytes.endIndex - at >= n else { throw .truncated(at: at) }
        at += n
        return (field, .fixed)
    }

    private mutating func varint() throws(Problem) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        let start = at
        while at < bytes.endIndex, shift < 64 {
            let byte = bytes[at]
            at += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        throw .truncated(at: start)
    }
}

extension ProtobufReader.Value {
    var uint: UInt64 {
        if case let .varint(v) = self { return v }
        return 0
    }
    var bool: Bool { uint != 0 }
    /// A string field as kept: bounded, control characters written out. Only a device's own
    /// words are read as text (its name, model, version), and any device on the network can
    /// answer on a proxy's address (`OutsideText`).
    var text: String {
        if case let .bytes(b) = self {
            return OutsideText.line(String(decoding: b.prefix(256), as: UTF8.self), limit: 120)
        }
        return ""
    }
    var data: ArraySlice<UInt8> {
        if case let .bytes(b) = self { return b }
        return []
    }
    /// A `sint32`'s zig-zag value.
    var sint: Int {
        let v = uint
        return Int(truncatingIfNeeded: Int64(bitPattern: (v >> 1) ^ (0 &- (v & 1))))
    }
}
