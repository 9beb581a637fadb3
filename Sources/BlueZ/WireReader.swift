/// Reads D-Bus wire format (the marshalling of the D-Bus specification) straight from a
/// message's bytes, for the one hot signal: Device1 `PropertiesChanged`.
///
/// dbus-daemon validates every message before routing it, but this reader trusts nothing:
/// every read is bounds-checked and returns nil past the end, so a short or odd message is
/// skipped, never a trap. Alignment is relative to the message start, as the spec says.
struct WireReader {
    let bytes: UnsafeRawBufferPointer
    var position: Int
    let bigEndian: Bool

    init(_ bytes: UnsafeRawBufferPointer, at position: Int = 0, bigEndian: Bool) {
        self.bytes = bytes
        self.position = position
        self.bigEndian = bigEndian
    }

    @inline(__always)
    mutating func align(_ n: Int) -> Bool {
        let aligned = (position + n - 1) & ~(n - 1)
        guard aligned <= bytes.count else { return false }
        position = aligned
        return true
    }

    mutating func u8() -> UInt8? {
        guard position < bytes.count else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func u16() -> UInt16? {
        guard align(2), position + 2 <= bytes.count else { return nil }
        let a = UInt16(bytes[position])
        let b = UInt16(bytes[position + 1])
        position += 2
        return bigEndian ? a << 8 | b : b << 8 | a
    }

    mutating func u32() -> UInt32? {
        guard align(4), position + 4 <= bytes.count else { return nil }
        var v: UInt32 = 0
        for i in 0..<4 {
            let byte = UInt32(bytes[position + i])
            v |= bigEndian ? byte << (8 * (3 - UInt32(i))) : byte << (8 * UInt32(i))
        }
        position += 4
        return v
    }

    /// A `s` or `o`: u32 length, bytes, NUL.
    mutating func string() -> String? {
        guard let n = u32().map(Int.init), position + n + 1 <= bytes.count else { return nil }
        defer { position += n + 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[position..<(position + n)]), as: UTF8.self)
    }

    /// Compares a `s` at the cursor with `expected` without building a String.
    mutating func stringEquals(_ expected: StaticString) -> Bool? {
        guard let n = u32().map(Int.init), position + n + 1 <= bytes.count else { return nil }
        defer { position += n + 1 }
        guard n == expected.utf8CodeUnitCount else { return false }
        return memcmp(bytes.baseAddress! + position, expected.utf8Start, n) == 0
    }

    /// A `g`: one length byte, bytes, NUL. Returned as a slice of the message.
    mutating func readSignature() -> UnsafeRawBufferPointer? {
        guard let n = u8().map(Int.init), position + n + 1 <= bytes.count else { return nil }
        defer { position += n + 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<(position + n)])
    }

    /// An `ay` where it lies in the message.
    mutating func byteSpan() -> UnsafeRawBufferPointer? {
        guard let n = u32().map(Int.init), position + n <= bytes.count else { return nil }
        defer { position += n }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<(position + n)])
    }

    /// A `s` where it lies in the message (without its NUL).
    mutating func stringSpan() -> UnsafeRawBufferPointer? {
        guard let n = u32().map(Int.init), position + n + 1 <= bytes.count else { return nil }
        defer { position += n + 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<(position + n)])
    }

    /// An `ay`: u32 length then the bytes.
    mutating func byteArray() -> [UInt8]? {
        guard let n = u32().map(Int.init), position + n <= bytes.count else { return nil }
        defer { position += n }
        return Array(UnsafeRawBufferPointer(rebasing: bytes[position..<(position + n)]))
    }

    /// Skips one complete value of the single complete type at the start of `signature`,
    /// returning how many signature bytes that type took (nil when malformed).
    mutating func skip(_ signature: UnsafeRawBufferPointer, depth: Int = 0) -> Int? {
        guard depth < 32, let code = signature.first else { return nil }
        switch code {
        case UInt8(ascii: "y"): return u8() == nil ? nil : 1
        case UInt8(ascii: "n"), UInt8(ascii: "q"): return u16() == nil ? nil : 1
        case UInt8(ascii: "b"), UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "h"): return u32() == nil ? nil : 1
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"):
            guard align(8), position + 8 <= bytes.count else { return nil }
            position += 8
            return 1
        case UInt8(ascii: "s"), UInt8(ascii: "o"):
            guard let n = u32().map(Int.init), position + n + 1 <= bytes.count else { return nil }
            position += n + 1
            return 1
        case UInt8(ascii: "g"): return readSignature() == nil ? nil : 1
        case UInt8(ascii: "v"):
            guard let inner = readSignature(), skip(inner, depth: depth + 1) == inner.count else { return nil }
            return 1
        case UInt8(ascii: "a"):
            let element = UnsafeRawBufferPointer(rebasing: signature[1...])
            guard let length = Self.completeTypeLength(element), let n = u32().map(Int.init),
                align(Self.alignment(of: element.first ?? 0)), position + n <= bytes.count
            else { return nil }
            position += n
            return 1 + length
        case UInt8(ascii: "("), UInt8(ascii: "{"):
            guard let length = Self.completeTypeLength(signature), align(8) else { return nil }
            var inner = UnsafeRawBufferPointer(rebasing: signature[1..<(length - 1)])
            while !inner.isEmpty {
                guard let used = skip(inner, depth: depth + 1) else { return nil }
                inner = UnsafeRawBufferPointer(rebasing: inner[used...])
            }
            return length
        default:
            return nil
        }
    }

    static func alignment(of code: UInt8) -> Int {
        switch code {
        case UInt8(ascii: "n"), UInt8(ascii: "q"): return 2
        case UInt8(ascii: "b"), UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "h"), UInt8(ascii: "s"),
            UInt8(ascii: "o"), UInt8(ascii: "a"):
            return 4
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "("), UInt8(ascii: "{"): return 8
        default: return 1
        }
    }

    /// Length in bytes of the single complete type at the start of `signature`.
    static func completeTypeLength(_ signature: UnsafeRawBufferPointer) -> Int? {
        guard let first = signature.first else { return nil }
        switch first {
        case UInt8(ascii: "a"):
            return completeTypeLength(UnsafeRawBufferPointer(rebasing: signature[1...])).map { $0 + 1 }
        case UInt8(ascii: "("), UInt8(ascii: "{"):
            let close = first == UInt8(ascii: "(") ? UInt8(ascii: ")") : UInt8(ascii: "}")
            var i = 1
            while i < signature.count {
                if signature[i] == close { return i + 1 }
                guard let n = completeTypeLength(UnsafeRawBufferPointer(rebasing: signature[i...])) else { return nil }
                i += n
            }
            return nil
        default:
            return 1
        }
    }
}

#if canImport(Glibc)
    import Glibc
#endif
