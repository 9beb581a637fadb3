/// An advertisement as the radio sent it — a run of AD structures (length, type, data; Core
/// Specification Supplement, Part A) — read into what a `Sighting` carries: manufacturer and
/// service data, the local name and the TX power level.
///
/// Why: receivers that forward raw advertisements (an ESPHome Bluetooth proxy) send the bytes
/// the air carried, not BlueZ's parsed properties. A structure whose length overruns the
/// advertisement is refused whole: its bytes belong to no field, and trusting any of them
/// would give a beacon data that was never sent.
public struct ADStructures: Sendable, Equatable {
    public var data = AdvertisementData()
    public var name: String?
    public var txPower: Int?

    /// Why an advertisement was refused.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// A structure's length runs past the end (at byte `at`).
        case overrun(at: Int)
        /// More bytes than an extended advertisement holds (`maxLength`).
        case tooLong(Int)

        public var description: String {
            switch self {
            case let .overrun(at): return "an AD structure at byte \(at) runs past the advertisement's end"
            case let .tooLong(n): return "\(n) bytes, more than an advertisement holds (\(ADStructures.maxLength))"
            }
        }
    }

    /// The longest advertising data accepted: an extended advertisement's 1,650 bytes.
    public static let maxLength = 1650

    public init() {}

    /// Reads `bytes`; a zero length ends the data early (the rest is padding, as in a legacy
    /// advertisement's 31 bytes).
    public init(parsing bytes: UnsafeRawBufferPointer) throws(Problem) {
        guard bytes.count <= Self.maxLength else { throw .tooLong(bytes.count) }
        var at = 0
        while at < bytes.count {
            let length = Int(bytes[at])
            if length == 0 { break }
            guard at + 1 + length <= bytes.count else { throw .overrun(at: at) }
            let type = bytes[at + 1]
            let field = UnsafeRawBufferPointer(rebasing: bytes[(at + 2)..<(at + 1 + length)])
            read(type: type, field)
            at += 1 + length
        }
    }

    public init(parsing bytes: [UInt8]) throws(Problem) {
        let parsed = bytes.withUnsafeBytes { b -> Result<ADStructures, Problem> in
            do throws(Problem) { return .success(try ADStructures(parsing: b)) } catch { return .failure(error) }
        }
        self = try parsed.get()
    }

    private mutating func read(type: UInt8, _ field: UnsafeRawBufferPointer) {
        switch type {
        case 0x08, 0x09:  // shortened or complete local name; the complete one wins
            if type == 0x09 || name == nil { name = String(decoding: field, as: UTF8.self) }
        case 0x0A where field.count >= 1:
            txPower = Int(Int8(bitPattern: field[0]))
        case 0xFF where field.count >= 2:
            data.appendManufacturer(
                company: UInt16(field[0]) | UInt16(field[1]) << 8,
                payload: UnsafeRawBufferPointer(rebasing: field[2...]))
        case 0x16 where field.count >= 2:
            data.appendService(
                shortUUID: UInt16(field[0]) | UInt16(field[1]) << 8,
                payload: UnsafeRawBufferPointer(rebasing: field[2...]))
        case 0x20 where field.count >= 4:
            let value = (0..<4).reduce(UInt32(0)) { $0 | UInt32(field[$1]) << (8 * $1) }
            data.appendService(ServiceUUID(uuid32: value), payload: UnsafeRawBufferPointer(rebasing: field[4...]))
        case 0x21 where field.count >= 16:
            // Little-endian on the air.
            let high = (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(field[15 - $1]) }
            let low = (8..<16).reduce(UInt64(0)) { $0 << 8 | UInt64(field[15 - $1]) }
            data.appendService(
                ServiceUUID(BeaconUUID(high: high, low: low)), payload: UnsafeRawBufferPointer(rebasing: field[16...]))
        default:
            break  // flags, UUID lists, appearance, …: nothing a sighting carries
        }
    }
}
