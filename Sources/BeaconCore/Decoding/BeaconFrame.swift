/// What a decoder recognised in one advertisement.
public enum BeaconFrame: Equatable, Sendable {
    case iBeacon(IBeaconFrame)
    case altBeacon(AltBeaconFrame)
    case eddystoneUID(EddystoneUIDFrame)
    case eddystoneURL(EddystoneURLFrame)
    /// Telemetry (TLM, Ruuvi) is boxed: its frames are four times an identity's size, and every
    /// frame would otherwise be copied at that size through the engine's hot path.
    indirect case eddystoneTLM(EddystoneTLMFrame)
    case eddystoneEID(EddystoneEIDFrame)
    /// Telemetry only, like TLM: joined to an asset by the address that sends it.
    indirect case ruuvi(RuuviFrame)

    /// The identity regions and ranging are keyed by, for the formats that carry one.
    /// URL, TLM and EID frames carry no stable identity (EID rotates by design).
    public var identity: BeaconIdentity? {
        switch self {
        case let .iBeacon(f): return .ibeacon(f.id)
        case let .altBeacon(f): return .ibeacon(f.id)
        case let .eddystoneUID(f): return .eddystone(f.id)
        case .eddystoneURL, .eddystoneTLM, .eddystoneEID, .ruuvi: return nil
        }
    }

    /// RSSI expected at 1 m, from the frame's calibration byte (Eddystone's is at 0 m:
    /// the Eddystone spec says to subtract 41 dB for 1 m).
    public var rssiAt1m: Int? {
        switch self {
        case let .iBeacon(f): return f.measuredPower
        case let .altBeacon(f): return f.referenceRSSI
        case let .eddystoneUID(f): return f.txPowerAt0m - 41
        case let .eddystoneURL(f): return f.txPowerAt0m - 41
        case let .eddystoneEID(f): return f.txPowerAt0m - 41
        case .eddystoneTLM, .ruuvi: return nil
        }
    }
}

/// uuid/major/minor: the identity iBeacon and AltBeacon share (AltBeacon id1/id2/id3).
public struct IBeaconID: Hashable, Sendable, CustomStringConvertible {
    public var uuid: BeaconUUID
    public var major: UInt16
    public var minor: UInt16
    public init(uuid: BeaconUUID, major: UInt16, minor: UInt16) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }
    public var description: String { "\(uuid)/\(major)/\(minor)" }

    /// The iBeacon frame as it follows Apple's company id (0x004C) in the manufacturer data:
    /// 02 15, the UUID, major, minor, and the power a receiver 1 m away hears. What the
    /// decoder reads, written once for everything that sends or simulates one.
    public func payload(measuredPower: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 23) { out, count in
            write(measuredPower: measuredPower, into: UnsafeMutableRawBufferPointer(out))
            count = 23
        }
    }

    /// The same 23 bytes written into `out` (a sighting's inline data, no array between).
    public func write(measuredPower: Int, into out: UnsafeMutableRawBufferPointer) {
        out[0] = 0x02
        out[1] = 0x15
        for i in 0..<8 {
            out[2 + i] = UInt8(truncatingIfNeeded: uuid.high >> UInt64(56 - 8 * i))
            out[10 + i] = UInt8(truncatingIfNeeded: uuid.low >> UInt64(56 - 8 * i))
        }
        (out[18], out[19], out[20], out[21]) = (
            UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF)
        )
        out[22] = UInt8(bitPattern: Int8(clamping: measuredPower))
    }
}

/// Eddystone-UID's 10-byte namespace and 6-byte instance, held as three integers.
///
/// Why: the beacon table is keyed by identities and looked up at every sighting; as two byte
/// arrays an Eddystone identity cost two allocations to make and a walk of both to hash.
public struct EddystoneID: Hashable, Sendable, CustomStringConvertible {
    /// The namespace's first 8 bytes and its last 2, most significant first.
    public var namespaceHigh: UInt64
    public var namespaceLow: UInt16
    /// The instance's 6 bytes, most significant first.
    public var instanceValue: UInt64

    /// From the arrays' first 10 and 6 bytes (shorter ones padded with zeros).
    public init(namespace: [UInt8], instance: [UInt8]) {
        func word(_ bytes: [UInt8], _ range: Range<Int>) -> UInt64 {
            range.reduce(0) { $0 << 8 | UInt64($1 < bytes.count ? bytes[$1] : 0) }
        }
        namespaceHigh = word(namespace, 0..<8)
        namespaceLow = UInt16(word(namespace, 8..<10))
        instanceValue = word(instance, 0..<6)
    }

    /// The 16 bytes of namespace then instance at `offset`; the caller has checked the length.
    init(bytes p: UnsafeRawBufferPointer, at offset: Int) {
        var high: UInt64 = 0
        for i in 0..<8 { high = high << 8 | UInt64(p[offset + i]) }
        var instance: UInt64 = 0
        for i in 10..<16 { instance = instance << 8 | UInt64(p[offset + i]) }
        namespaceHigh = high
        namespaceLow = UInt16(p[offset + 8]) << 8 | UInt16(p[offset + 9])
        instanceValue = instance
    }

    public var namespace: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: namespaceHigh >> UInt64(56 - 8 * $0)) }
            + [UInt8(namespaceLow >> 8), UInt8(namespaceLow & 0xFF)]
    }

    public var instance: [UInt8] { (0..<6).map { UInt8(truncatingIfNeeded: instanceValue >> UInt64(40 - 8 * $0)) } }

    public var description: String { "\(Hex.encode(namespace))/\(Hex.encode(instance))" }
}

/// Identity of a beacon across advertisements, receivers and address rotation.
public enum BeaconIdentity: Hashable, Sendable, CustomStringConvertible {
    case ibeacon(IBeaconID)
    case eddystone(EddystoneID)

    /// Every sighting looks its beacon up by this: an iBeacon's 20 bytes go to the hasher as
    /// two words, not five fields and a case tag (a third of the lookup's time).
    public func hash(into hasher: inout Hasher) {
        switch self {
        case let .ibeacon(id):
            hasher.combine(id.uuid.high)
            hasher.combine(id.uuid.low ^ (UInt64(id.major) << 16 | UInt64(id.minor)).byteSwapped)
        case let .eddystone(id):
            hasher.combine(id.namespaceHigh)
            hasher.combine(UInt64(id.namespaceLow) << 48 | id.instanceValue)
        }
    }

    public var description: String {
        switch self {
        case let .ibeacon(id): return id.description
        case let .eddystone(id): return id.description
        }
    }
}

public struct IBeaconFrame: Equatable, Sendable {
    public var id: IBeaconID
    public var measuredPower: Int
}

public struct AltBeaconFrame: Equatable, Sendable {
    public var company: UInt16
    public var id: IBeaconID
    public var referenceRSSI: Int
    public var manufacturerReserved: UInt8
}

public struct EddystoneUIDFrame: Equatable, Sendable {
    public var id: EddystoneID
    public var txPowerAt0m: Int
}

public struct EddystoneURLFrame: Equatable, Sendable {
    public var url: String
    public var txPowerAt0m: Int
}

/// Telemetry. Unencrypted TLM carries battery, temperature and counters; encrypted TLM
/// (version 1) is recognised but its fields are opaque.
public struct EddystoneTLMFrame: Equatable, Sendable {
    public var encrypted: Bool
    public var batteryMillivolts: Int?
    /// Degrees Celsius, nil when the beacon reports "not supported" (0x8000).
    public var temperatureC: Double?
    public var advertisementCount: UInt32?
    /// Time since power-on, in 0.1 s units, as the frame carries it.
    public var uptimeDeciseconds: UInt32?
}

/// Ephemeral id: recognised so it is not counted as garbage, but it cannot be resolved
/// without the beacon's identity key, which a gateway does not hold.
public struct EddystoneEIDFrame: Equatable, Sendable {
    public var ephemeralID: [UInt8]
    public var txPowerAt0m: Int
}
