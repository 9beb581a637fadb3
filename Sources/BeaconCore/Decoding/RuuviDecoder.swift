/// Ruuvi data format 5 (RAWv2) on manufacturer 0x0499, as docs.ruuvi.com publishes it: 24
/// bytes, every field big-endian, "not available" as the largest unsigned or the smallest
/// signed value (all ones for the address). Other Ruuvi formats are counted, not decoded.
public enum RuuviDecoder {
    public static let company: UInt16 = 0x0499

    public static func decode(_ p: [UInt8]) -> Result<BeaconFrame, NonMatchError> {
        p.withUnsafeBytes { decode($0) }
    }

    /// The same, read where the bytes lie (a sighting's inline data): nothing is copied.
    public static func decode(_ p: UnsafeRawBufferPointer) -> Result<BeaconFrame, NonMatchError> {
        guard let format = p.first else { return .failure(NonMatchError(.ruuviLength)) }
        guard format == 5 else { return .failure(NonMatchError(.ruuviFormat)) }
        guard p.count == 24 else { return .failure(NonMatchError(.ruuviLength)) }
        func u16(_ i: Int) -> Int { Int(p[i]) << 8 | Int(p[i + 1]) }
        func i16(_ i: Int) -> Int? {
            let v = Int(Int16(bitPattern: UInt16(u16(i))))
            return v == Int(Int16.min) ? nil : v
        }
        var f = RuuviFrame()
        f.temperatureC = i16(1).map { Double($0) * 0.005 }
        f.humidityPercent = u16(3) == 0xFFFF ? nil : Double(u16(3)) * 0.0025
        f.pressurePa = u16(5) == 0xFFFF ? nil : u16(5) + 50_000
        (f.accelerationX, f.accelerationY, f.accelerationZ) = (i16(7), i16(9), i16(11))
        let power = u16(13)
        f.batteryMillivolts = power >> 5 == 0x7FF ? nil : 1600 + power >> 5
        f.txPower = power & 0x1F == 0x1F ? nil : -40 + 2 * (power & 0x1F)
        f.movementCounter = p[15] == 0xFF ? nil : Int(p[15])
        f.sequence = u16(16) == 0xFFFF ? nil : u16(16)
        let mac = p[18..<24]
        f.address =
            mac.allSatisfy { $0 == 0xFF } ? nil : mac.map { Hex.encode([$0]).uppercased() }.joined(separator: ":")
        return .success(.ruuvi(f))
    }
}

/// A RuuviTag's measurements (data format 5); nil where the tag says "not available".
public struct RuuviFrame: Equatable, Sendable {
    public var temperatureC: Double?
    public var humidityPercent: Double?
    public var pressurePa: Int?
    /// Milli-g on each axis.
    public var accelerationX: Int?, accelerationY: Int?, accelerationZ: Int?
    public var batteryMillivolts: Int?
    /// dBm.
    public var txPower: Int?
    /// Counts motion interrupts; a change means the tag moved.
    public var movementCounter: Int?
    public var sequence: Int?
    /// The tag's own address, as it writes it into the frame.
    public var address: String?

    public init() {}
}
