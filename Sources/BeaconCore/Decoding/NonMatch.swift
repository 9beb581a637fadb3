/// Why an advertisement was not decoded as a beacon. Each reason is counted, never logged
/// per packet: a busy site hears thousands of phones and tags that are not beacons.
public enum NonMatch: Int, CaseIterable, Sendable, CustomStringConvertible {
    /// Neither manufacturer data nor service data.
    case noPayload
    /// Payloads present, none with a beacon prefix (most phones, headsets, tags).
    case notABeacon
    /// Apple 0x02 0x15 prefix with the wrong length.
    case iBeaconLength
    /// 0xBEAC prefix with the wrong length.
    case altBeaconLength
    /// Eddystone service data with a frame type we do not know.
    case eddystoneFrameType
    /// Eddystone frame too short or too long for its type.
    case eddystoneLength
    /// Eddystone-URL with an unknown scheme or a reserved byte in the URL.
    case eddystoneURLEncoding
    /// Ruuvi data format 5 of the wrong length, or an empty Ruuvi payload.
    case ruuviLength
    /// A Ruuvi data format other than 5 (3 is deprecated; 6, C5 and E1 are not decoded).
    case ruuviFormat

    public var description: String {
        switch self {
        case .noPayload: return "no_payload"
        case .notABeacon: return "not_a_beacon"
        case .iBeaconLength: return "ibeacon_length"
        case .altBeaconLength: return "altbeacon_length"
        case .eddystoneFrameType: return "eddystone_frame_type"
        case .eddystoneLength: return "eddystone_length"
        case .eddystoneURLEncoding: return "eddystone_url_encoding"
        case .ruuviLength: return "ruuvi_length"
        case .ruuviFormat: return "ruuvi_format"
        }
    }
}

/// Counts of advertisements by outcome, for `/metrics` and `beaconctl status`.
public struct DecodeCounters: Sendable, Equatable {
    public var decoded = 0
    public private(set) var nonMatches = [Int](repeating: 0, count: NonMatch.allCases.count)

    public init() {}

    public mutating func count(_ reason: NonMatch) { nonMatches[reason.rawValue] += 1 }
    public subscript(reason: NonMatch) -> Int { nonMatches[reason.rawValue] }
    public var totalNonMatches: Int { nonMatches.reduce(0, +) }
}
