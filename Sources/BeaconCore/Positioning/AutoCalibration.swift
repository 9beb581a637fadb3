#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Calibration with no one walking the floor: each gateway advertises from every one of its
/// receivers as an iBeacon of the site's calibration UUID (`calibration.advertise`), the
/// other receivers hear it from distances the site file gives, and `RSSICalibration` fits
/// each hearer to those pairs.
///
/// Why pairs of fixed receivers: a reference tag carried through a store gives a fit for the
/// afternoon someone walked; receivers that hear each other give one every minute, for as
/// long as the site runs, and show a receiver whose mounting changed. What they hear is the
/// gateways' own signal, not a tag's: `tagOffset` (dB the tags are weaker at 1 m) carries
/// the fit over to the tags, and the exponent carries over as it is.
///
/// Pure: fed sightings the engine has decoded, it keeps one running tally per (hearer,
/// advertiser) pair — memory bounded by the receivers configured, whatever is heard.
public struct AutoCalibration: Sendable {
    /// beacond's calibration UUID, used when `calibration.uuid` does not name another.
    public static let defaultUUID = BeaconUUID("B3AC0CA1-1B8A-4E5D-9C1E-0CA11B8A7E00")!
    /// A pair heard fewer times than this is left out of the fit (a packet or two is noise).
    public static let minimumSamples = 5

    /// One (hearer, advertiser) pair's tally.
    public struct Pair: Sendable, Equatable {
        public var hearer: String
        public var advertiser: String
        /// Metres between the two receivers (3-D when both have a mounting height).
        public var distance: Double
        public var samples: Int
        public var meanRSSI: Double
        public var standardDeviation: Double
        public var lastHeard: Timestamp
    }

    struct Tally: Sendable {
        var count = 0
        var sum = 0.0
        var sumOfSquares = 0.0
        var last = Timestamp(nanoseconds: 0)
    }

    public let uuid: BeaconUUID
    public let receivers: [SiteReceiver]
    /// `major << 16 | minor` of each receiver's advertisement -> its index in `receivers`.
    private let byIdentity: [UInt32: Int]
    private let byName: [String: Int]
    private var tallies: [Int: Tally] = [:]
    /// Since when the tallies count (the start, a reload that moved receivers, a reset).
    public private(set) var since: Timestamp
    /// Calibration advertisements of no configured receiver (a neighbouring site's on the
    /// same UUID, or a gateway running an older file).
    public private(set) var unknownAdvertisers = 0

    /// nil when fewer than two receivers are configured: nothing could hear anything.
    public init?(receivers: [SiteReceiver], uuid: BeaconUUID, start: Timestamp) {
        guard receivers.count >= 2 else { return nil }
        self.uuid = uuid
        self.receivers = receivers
        var identities: [UInt32: Int] = [:]
        var names: [String: Int] = [:]
        for (i, r) in receivers.enumerated() {
            let id = Self.identity(of: r.id)
            let key = UInt32(id.major) << 16 | UInt32(id.minor)
            if identities[key] == nil { identities[key] = i }
            if names[r.id] == nil { names[r.id] = i }
        }
        byIdentity = identities
        byName = names
        since = start
    }

    /// The iBeacon major and minor a receiver advertises as: its id's 32-bit FNV-1a hash,
    /// so that every gateway of a site derives the same identity from the same file, and
    /// reordering `receivers:` changes nothing. `collisions` finds the rare pair that clash.
    public static func identity(of receiver: String) -> (major: UInt16, minor: UInt16) {
        var hash: UInt32 = 0x811C_9DC5
        for byte in receiver.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return (UInt16(hash >> 16), UInt16(hash & 0xFFFF))
    }

    /// Pairs of receiver ids whose advertisements would look alike.
    public static func collisions(_ ids: [String]) -> [(String, String)] {
        var seen: [UInt32: String] = [:]
        var found: [(String, String)] = []
        for id in ids {
            let i = identity(of: id)
            let key = UInt32(i.major) << 16 | UInt32(i.minor)
            if let other = seen[key], other != id { found.append((other, id)) } else { seen[key] = id }
        }
        return found
    }

    /// Whether this is the calibration of these receivers on this UUID (a reload that keeps
    /// them keeps the tallies).
    public func covers(_ receivers: [SiteReceiver], uuid: BeaconUUID) -> Bool {
        self.uuid == uuid && self.receivers == receivers
    }

    /// A calibration advertisement (`major`, `minor` on `uuid`) heard by `hearer`.
    public mutating func observe(hearer: String, major: UInt16, minor: UInt16, rssi: Int, at t: Timestamp) {
        guard let advertiser = byIdentity[UInt32(major) << 16 | UInt32(minor)] else {
            unknownAdvertisers += 1
            return
        }
        // A hearer that is not a configured receiver has no known distance; itself, none either.
        guard let h = byName[hearer], h != advertiser, distance(h, advertiser) != nil else { return }
        let r = Double(rssi)
        tallies[h * receivers.count + advertiser, default: Tally()].add(r, at: t)
    }

    /// Forgets every tally (a receiver was remounted; an operator wants a fresh fit).
    public mutating func reset(at t: Timestamp) {
        tallies.removeAll()
        unknownAdvertisers = 0
        since = t
    }

    /// Every pair heard, hearer then advertiser in configuration order.
    public var pairs: [Pair] {
        tallies.keys.sorted().compactMap { key in
            let h = key / receivers.count, a = key % receivers.count
            guard let t = tallies[key], let d = distance(h, a) else { return nil }
            let mean = t.sum / Double(t.count)
            let variance = max(0, t.sumOfSquares / Double(t.count) - mean * mean)
            return Pair(
                hearer: receivers[h].id, advertiser: receivers[a].id, distance: d, samples: t.count,
                meanRSSI: mean, standardDeviation: variance.squareRoot(), lastHeard: t.last)
        }
    }

    /// Each hearer's fit, one sample per pair heard at least `minimumSamples` times (its mean,
    /// less `tagOffset`: what a tag there would be heard at), so that a loud pair counts once,
    /// not once per packet. `previous` gives the "before" of each fit.
    public func fit(previous: [String: ReceiverCalibration] = [:], tagOffset: Double = 0) -> [RSSICalibration.Fit] {
        let samples = pairs.filter { $0.samples >= Self.minimumSamples }.map {
            RSSICalibration.Sample(receiver: $0.hearer, distance: $0.distance, rssi: $0.meanRSSI - tagOffset)
        }
        return RSSICalibration.fit(samples, previous: previous)
    }

    /// Metres between two receivers on one level; nil across levels (a floor between them is
    /// not the room's path loss).
    private func distance(_ a: Int, _ b: Int) -> Double? {
        let p = receivers[a], q = receivers[b]
        guard p.level == q.level else { return nil }
        let dx = p.position.x - q.position.x, dy = p.position.y - q.position.y
        let dz = (p.z != nil && q.z != nil) ? p.z! - q.z! : 0
        return max(0.1, (dx * dx + dy * dy + dz * dz).squareRoot())
    }
}

extension AutoCalibration.Tally {
    mutating func add(_ rssi: Double, at t: Timestamp) {
        count += 1
        sum += rssi
        sumOfSquares += rssi * rssi
        last = t
    }
}
