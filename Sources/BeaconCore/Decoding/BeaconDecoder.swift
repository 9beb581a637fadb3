/// Turns the payloads of one advertisement into a beacon frame, or a reason it is none.
///
/// Radio input is hostile by nature (truncated packets, vendors reusing prefixes, fuzzers):
/// every read is bounds-checked first, so no input of any length or content can trap.
public enum BeaconDecoder {
    public static let appleCompany: UInt16 = 0x004C
    public static let eddystoneServiceUUID = "0000feaa-0000-1000-8000-00805f9b34fb"

    /// Manufacturer data first (iBeacon, AltBeacon), then Eddystone service data; the first
    /// recognised frame wins. When nothing matches, the most specific reason is returned.
    public static func decode(
        manufacturerData: [ManufacturerDatum], serviceData: [ServiceDatum]
    ) -> Result<BeaconFrame, NonMatchError> {
        if manufacturerData.isEmpty && serviceData.isEmpty { return .failure(NonMatchError(.noPayload)) }
        var reason = NonMatch.notABeacon
        for datum in manufacturerData {
            switch decodeManufacturer(company: datum.company, payload: datum.payload) {
            case let .success(frame): return .success(frame)
            case let .failure(e): if e.reason != .notABeacon { reason = e.reason }
            }
        }
        for datum in serviceData where isEddystone(datum.uuid) {
            switch EddystoneDecoder.decode(datum.payload) {
            case let .success(frame): return .success(frame)
            case let .failure(e): reason = e.reason
            }
        }
        return .failure(NonMatchError(reason))
    }

    public static func decode(_ sighting: Sighting) -> Result<BeaconFrame, NonMatchError> {
        decode(manufacturerData: sighting.manufacturerData, serviceData: sighting.serviceData)
    }

    /// iBeacon: Apple, `02 15`, uuid(16) major(2) minor(2) power(1) = 23 bytes.
    /// AltBeacon: any company, `BE AC`, id(20) refRSSI(1) reserved(1) = 24 bytes.
    /// Ruuvi (0x0499): `RuuviDecoder`.
    public static func decodeManufacturer(company: UInt16, payload p: [UInt8]) -> Result<BeaconFrame, NonMatchError> {
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

    /// BlueZ gives full 128-bit UUIDs in lower case; accept any case and the 16-bit short form.
    static func isEddystone(_ uuid: String) -> Bool {
        let u = uuid.utf8
        if u.count == 4 || u.count == 6 { return uuid.lowercased().hasSuffix("feaa") }
        return u.count == 36 && uuid.lowercased() == eddystoneServiceUUID
    }
}

/// A `NonMatch` as an `Error`, so decoders can return `Result`.
public struct NonMatchError: Error, Equatable, Sendable {
    public var reason: NonMatch
    public init(_ reason: NonMatch) { self.reason = reason }
}
