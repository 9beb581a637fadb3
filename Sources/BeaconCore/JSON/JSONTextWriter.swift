/// Writes JSON text as it goes: keys, values and brackets straight into one byte buffer,
/// with the commas placed for the caller.
///
/// Why: every event the daemon publishes and every line `beacond replay` prints is written
/// once and never read back, so building a `JSONValue` tree first only to serialize it costs
/// an allocation per member for nothing, and appending to a `String` scalar by scalar costs
/// more than the bytes. `JSONValue.serialized` comes through here too, so a tree and a
/// streamed event give the same bytes (`CloudEventTextTests`).
///
/// Numbers: integral values print without a fraction (`-67`, not `-67.0`); others with at
/// most 6 decimals, enough for metres and seconds; non-finite ones as `null`.
public struct JSONTextWriter {
    public private(set) var bytes: [UInt8] = []
    /// A value was just written at this level: the next key or item needs a comma.
    private var afterValue = false

    public init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    /// The text written so far (validated once, here, not per piece).
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Ends a line of JSON Lines: the next value starts a new document.
    public mutating func newline() {
        bytes.append(UInt8(ascii: "\n"))
        afterValue = false
    }

    public mutating func openObject() { open(UInt8(ascii: "{")) }
    public mutating func closeObject() { close(UInt8(ascii: "}")) }
    public mutating func openArray() { open(UInt8(ascii: "[")) }
    public mutating func closeArray() { close(UInt8(ascii: "]")) }

    /// An object member's key; its value comes next. Keys are the program's own names.
    public mutating func key(_ name: StaticString) {
        if afterValue { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        afterValue = false
    }

    /// A key that is data (an object read from a tree), escaped as a string is.
    public mutating func key(_ name: String) {
        string(name)
        bytes.append(UInt8(ascii: ":"))
        afterValue = false
    }

    /// A key that is a whole number (a company id), written as its decimal digits.
    public mutating func key(integer n: Int) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        appendInteger(Int64(n))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        afterValue = false
    }

    /// A string of `count` bytes that need no escape (hex digits, an address), which `write`
    /// puts in place: nothing is made on the way.
    public mutating func asciiString(count: Int, _ write: (UnsafeMutableRawBufferPointer) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: count))
        bytes.withUnsafeMutableBytes { write(UnsafeMutableRawBufferPointer(rebasing: $0[start..<(start + count)])) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// `bytes` as lower-case hex digits, in a string.
    public mutating func hexString(_ data: UnsafeRawBufferPointer) {
        asciiString(count: data.count * 2) { Hex.write(data, into: $0) }
    }

    public mutating func string(_ s: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { utf8 in
            // Runs that need no escape go in whole.
            var run = 0
            for (i, b) in utf8.enumerated() where b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run..<i]))
                escape(b)
                run = i + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func number(_ n: Double) {
        separate()
        guard n.isFinite else { return appendASCII("null") }
        if n == n.rounded(), abs(n) < 1e15 { return appendInteger(Int64(n)) }
        // Round to 6 decimals and trim trailing zeros; deterministic across platforms.
        let scaled = (n * 1_000_000).rounded()
        guard abs(scaled) < 9e18 else { return appendASCII(String(n)) }
        if scaled < 0 { bytes.append(UInt8(ascii: "-")) }
        let units = Int64(abs(scaled))
        appendInteger(units / 1_000_000)
        var fraction = units % 1_000_000
        guard fraction != 0 else { return }
        var digits = 6
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        bytes.append(UInt8(ascii: "."))
        appendInteger(fraction, width: digits)
    }

    public mutating func int(_ n: Int) {
        separate()
        appendInteger(Int64(n))
    }

    public mutating func bool(_ b: Bool) {
        separate()
        appendASCII(b ? "true" : "false")
    }

    public mutating func null() {
        separate()
        appendASCII("null")
    }

    /// A value held as a tree (a test delivery's data, a document being serialized).
    public mutating func value(_ v: JSONValue) {
        switch v {
        case .null: null()
        case let .bool(b): bool(b)
        case let .number(n): number(n)
        case let .string(s): string(s)
        case let .array(items):
            openArray()
            for item in items { value(item) }
            closeArray()
        case let .object(members):
            openObject()
            for (name, item) in members {
                key(name)
                value(item)
            }
            closeObject()
        }
    }

    public mutating func member(_ name: StaticString, _ s: String) {
        key(name)
        string(s)
    }

    public mutating func member(_ name: StaticString, _ n: Double) {
        key(name)
        number(n)
    }

    /// A number, or `null` when there is none.
    public mutating func member(_ name: StaticString, _ n: Double?) {
        key(name)
        if let n { number(n) } else { null() }
    }

    /// A string, or `null` when there is none.
    public mutating func member(_ name: StaticString, _ s: String?) {
        key(name)
        if let s { string(s) } else { null() }
    }

    private mutating func separate() {
        if afterValue { bytes.append(UInt8(ascii: ",")) }
        afterValue = true
    }

    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        afterValue = false
    }

    private mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        afterValue = true
    }

    private mutating func appendASCII(_ s: StaticString) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    private mutating func appendASCII(_ s: String) {
        bytes.append(contentsOf: s.utf8)
    }

    /// Decimal digits of `n`, zero-padded to `width`.
    private mutating func appendInteger(_ n: Int64, width: Int = 1) {
        if n < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = n.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // up to 20 digits, backwards
        var count = 0
        withUnsafeMutableBytes(of: &digits) { out in
            repeat {
                out[23 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            while count < width {
                out[23 - count] = UInt8(ascii: "0")
                count += 1
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: out[(24 - count)...]))
        }
    }

    /// A byte that cannot stand in a JSON string as itself.
    private mutating func escape(_ b: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch b {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(b)
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xF)]])
        }
    }
}
