/// Eddystone frames on service 0xFEAA (UID 0x00, URL 0x10, TLM 0x20, EID 0x30), following
/// google/eddystone's protocol specification.
public enum EddystoneDecoder {
    public static func decode(_ p: [UInt8]) -> Result<BeaconFrame, NonMatchError> {
        p.withUnsafeBytes { decode($0) }
    }

    /// The same, read where the bytes lie (a sighting's inline data): nothing is copied.
    public static func decode(_ p: UnsafeRawBufferPointer) -> Result<BeaconFrame, NonMatchError> {
        guard let frameType = p.first else { return .failure(NonMatchError(.eddystoneLength)) }
        switch frameType {
        case 0x00:
            // type, tx, namespace(10), instance(6), [RFU(2)]: 18 bytes, 20 with the reserved tail.
            guard p.count == 18 || p.count == 20 else { return .failure(NonMatchError(.eddystoneLength)) }
            let id = EddystoneID(bytes: p, at: 2)
            return .success(.eddystoneUID(EddystoneUIDFrame(id: id, txPowerAt0m: Int(Int8(bitPattern: p[1])))))
        case 0x10:
            // type, tx, scheme, up to 17 encoded bytes.
            guard p.count >= 3, p.count <= 20 else { return .failure(NonMatchError(.eddystoneLength)) }
            guard let url = decodeURL(scheme: p[2], body: p[3...]) else {
                return .failure(NonMatchError(.eddystoneURLEncoding))
            }
            return .success(.eddystoneURL(EddystoneURLFrame(url: url, txPowerAt0m: Int(Int8(bitPattern: p[1])))))
        case 0x20:
            return decodeTLM(p)
        case 0x30:
            // type, tx, ephemeral id(8).
            guard p.count == 10 else { return .failure(NonMatchError(.eddystoneLength)) }
            return .success(
                .eddystoneEID(
                    EddystoneEIDFrame(ephemeralID: Array(p[2..<10]), txPowerAt0m: Int(Int8(bitPattern: p[1])))))
        default:
            return .failure(NonMatchError(.eddystoneFrameType))
        }
    }

    private static func decodeTLM(_ p: UnsafeRawBufferPointer) -> Result<BeaconFrame, NonMatchError> {
        guard p.count >= 2 else { return .failure(NonMatchError(.eddystoneLength)) }
        switch p[1] {
        case 0x00:
            guard p.count == 14 else { return .failure(NonMatchError(.eddystoneLength)) }
            let battery = Int(UInt16(p[2]) << 8 | UInt16(p[3]))
            let rawTemp = Int16(bitPattern: UInt16(p[4]) << 8 | UInt16(p[5]))
            let temperature: Double? = rawTemp == Int16.min ? nil : Double(rawTemp) / 256.0
            return .success(
                .eddystoneTLM(
                    EddystoneTLMFrame(
                        encrypted: false, batteryMillivolts: battery == 0 ? nil : battery, temperatureC: temperature,
                        advertisementCount: be32(p, 6), uptimeDeciseconds: be32(p, 10))))
        case 0x01:
            // Encrypted TLM: type, version, etlm(12), salt(2), mic(2).
            guard p.count == 18 else { return .failure(NonMatchError(.eddystoneLength)) }
            return .success(.eddystoneTLM(EddystoneTLMFrame(encrypted: true)))
        default:
            return .failure(NonMatchError(.eddystoneFrameType))
        }
    }

    private static func be32(_ p: UnsafeRawBufferPointer, _ i: Int) -> UInt32 {
        UInt32(p[i]) << 24 | UInt32(p[i + 1]) << 16 | UInt32(p[i + 2]) << 8 | UInt32(p[i + 3])
    }

    private static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    private static let expansions = [
        ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/", ".com", ".org", ".edu", ".net", ".info",
        ".biz", ".gov",
    ]

    /// Expands the compressed URL; nil for an unknown scheme or a byte the spec reserves.
    static func decodeURL(scheme: UInt8, body: some Sequence<UInt8>) -> String? {
        guard Int(scheme) < schemes.count else { return nil }
        var url = schemes[Int(scheme)]
        for byte in body {
            if Int(byte) < expansions.count {
                url += expansions[Int(byte)]
            } else if byte > 0x20 && byte < 0x7F {
                url.unicodeScalars.append(UnicodeScalar(byte))
            } else {
                return nil
            }
        }
        return url
    }
}
