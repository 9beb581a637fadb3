/// Turns the payloads of one advertisement into a beacon frame, or a reason it is none.
///
/// Radio input is hostile by nature (truncated packets, vendors reusing prefixes, fuzzers):
/// every read is bounds-checked first, so no input of any length or content can trap.
public enum BeaconDecoder {
    public static let appleCompany: UInt16 = 0x004C
    public static let eddystoneServiceUUID = "0000feaa-0000-1000-8000-00805f9b34fb"

    /// Manufacturer data first (iBeacon, AltBeacon, Ruuvi), then Eddystone service data; the
    /// first recognised frame wins. When nothing matches, the most specific reason is returned.
    /// Read where the bytes lie: nothing is copied.
    public static func decode(_ data: AdvertisementData) -> Result<BeaconFrame, NonMatchError> {
        if data.isEmpty { return .failure(NonMatchError(.noPayload)) }
        var reason = NonMatch.notABeacon
        let found = data.first { (entry: AdvertisementData.Entry) -> BeaconFrame? in
            let result: Result<BeaconFrame, NonMatchError>
            if entry.isManufacturer {
                result = decodeManufacturer(company: entry.company, payload: entry.payload)
            } else if entry.shortUUID == eddystoneShortUUID {
                result = EddystoneDecoder.decode(entry.payload)
            } else {
                return nil
            }
            switch result {
            case let .success(frame): return frame
            case let .failure(e):
                // Any Eddystone reason outranks a manufacturer's "not a beacon".
                if e.reason != .notABeacon || !entry.isManufacturer { reason = e.reason }
                return nil
            }
        }
        if let found { return .success(found) }
        return .failure(NonMatchError(reason))
    }

    /// The same for data given as arrays (the tests' form).
    public static func decode(
        manufacturerData: [ManufacturerDatum], serviceData: [ServiceDatum]
    ) -> Result<BeaconFrame, NonMatchError> {
        decode(AdvertisementData(manufacturerData: manufacturerData, serviceData: serviceData))
    }

    public static func decode(_ sighting: Sighting) -> Result<BeaconFrame, NonMatchError> {
        decode(sighting.data)
    }

    /// Eddystone's 16-bit service UUID.
    public static let eddystoneShortUUID: UInt16 = 0xFEAA

    /// iBeacon: Apple, `02 15`, uuid(16) major(2) minor(2) power(1) = 23 bytes.
    /// AltBeacon: any company, `BE AC`, id(20) refRSSI(1) reserved(1) = 24 bytes.
    /// Ruuvi (0x0499): `RuuviDecoder`.
    public static func decodeManufacturer(company: UInt16, payload p: [UInt8]) -> Result<BeaconFrame, NonMatchError> {
        p.withUnsafeBytes { decodeManufacturer(company: company, payload: $0) }
    }

    /// The same, read where the bytes lie.
    public static func decodeManufacturer(
        company: UInt16, payload p: UnsafeRawBufferPointer
    ) -> Result<BeaconFrame, NonMatchError> {
        if company == RuuviDecoder.company { return RuuviDecoder.decode(p) }
        guard p.count >= 2 else { return .failure(NonMatchError(.notABeacon)) }
        if company == appleCompany, p[0] == 0x02, p[1] == 0x15 {
            guard p.count == 23 else { return .failure(NonMatchError(.iBeaconLength)) }
            let id = IBeaconID(
                uuid: BeaconUUID(bytes: p, at: 2), major: UInt16(p[18]) << 8 | UInt16(p[19]),
                minor: UInt16(p[20]) << 8 | UInt16(p[21]))
            return .success(.iBeacon(IBeaconFrame(id: id, measuredPower: Int(Int8(bitPattern: p[22])))))
        }
        if p[0] == 0xBE, p[1] == 0xAC {
            guard p.count == 24 else { return .failure(NonMatchError(.altBeaconLength)) }
            let id = IBeaconID(
                uuid: BeaconUUID(bytes: p, at: 2), major: UInt16(p[18]) << 8 | UInt16(p[19]),
                minor: UInt16(p[20]) << 8 | UInt16(p[21]))
            return .success(
                .altBeacon(
                    AltBeaconFrame(
                        company: company, id: id, referenceRSSI: Int(Int8(bitPattern: p[22])),
                        manufacturerReserved: p[23])))
        }
        return .failure(NonMatchError(.notABeacon))
    }
}

/// A `NonMatch` as an `Error`, so decoders can return `Result`.
public struct NonMatchError: Error, Equatable, Sendable {
    public var reason: NonMatch
    public init(_ reason: NonMatch) { self.reason = reason }
}
