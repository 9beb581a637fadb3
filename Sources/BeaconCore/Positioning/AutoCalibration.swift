#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Calibration with no one walking the floor: each gateway advertises from every one of its
/// receivers as an iBeacon of the site's calibration UUID (`calibration.advertise`), the
/// other receivers hear it from distances the site file gives, and every receiver is fitted
/// to those pairs at once (`fit`).
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

    /// The wall clock was stepped (`BeaconEngine.shiftClock`): the times kept move with it.
    public mutating func shift(by d: TimeSpan) {
        since = since + d
        for key in tallies.keys { tallies[key]!.last = tallies[key]!.last + d }
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

    /// Each hearer's fit on its own, one sample per pair heard at least `minimumSamples`
    /// times (its mean, less `tagOffset`), as `calibrate fit` fits a reference tag. Kept to
    /// show why it is not used: from pairs 10–20 m apart it extrapolates to 1 m, and a few dB
    /// of one pair's shadowing become 10 dB in `rssi_at_1m` (BENCHMARKS.md).
    public func fitEachAlone(previous: [String: ReceiverCalibration] = [:], tagOffset: Double = 0)
        -> [RSSICalibration.Fit]
    {
        let samples = pairs.filter { $0.samples >= Self.minimumSamples }.map {
            RSSICalibration.Sample(receiver: $0.hearer, distance: $0.distance, rssi: $0.meanRSSI - tagOffset)
        }
        return RSSICalibration.fit(samples, previous: previous)
    }

    /// Shadowing between two fixed receivers (dB, 1 σ), which time does not average away.
    public static let pairShadowingDB = 4.0
    /// How far apart radios' gains usually are (dB, 1 σ), and how far a room's exponent is
    /// from the configured one: the priors that keep a fit to few pairs from wandering.
    public static let gainSpreadDB = 3.0
    public static let exponentSpread = 0.5

    /// Passes of the robust fit: each weighs the pairs by how far the last one put them off.
    static let robustPasses = 6

    /// A pair whose readings spread wider than shadowing does (two transmitters under one
    /// identity: a phone or a relay advertising a receiver's calibration beacon beside the
    /// real one) counts for less: 1 up to `pairShadowingDB`, then (σ/sd)².
    static func spreadWeight(_ p: Pair) -> Double {
        let sd = max(p.standardDeviation, pairShadowingDB)
        return pow(pairShadowingDB / sd, 2)
    }

    /// Huber's weight for a pair `r` dB off the fit, and none beyond 4 σ: one pair (a spoofed
    /// identity heard at −45 dBm across the room) moves the fit by a bounded amount, and a
    /// pair that far from what all the others agree on is left out.
    static func residualWeight(_ r: Double) -> Double {
        let k = 1.5 * pairShadowingDB
        if abs(r) > 4 * pairShadowingDB { return 0 }
        return abs(r) <= k ? 1 : k / abs(r)
    }

    /// Every receiver fitted at once, as the pairs are heard: a pair's mean RSSI is
    /// `C + g_hearer + g_advertiser − 10·n·log10(d)`, one antenna's gain `g` counting when it
    /// sends and when it hears, one exponent `n` for the room. Solved by least squares with
    /// priors (each `g` around 0 within `gainSpreadDB`, `n` around the configured exponent
    /// within `exponentSpread`), so that a receiver is moved from "like the others" only as
    /// far as its pairs show. A receiver's `rssi_at_1m` is then `C + g − tagOffset`: what it
    /// hears of a tag at 1 m. "Before" is each hearer's pairs against its configured values;
    /// "after", against the fitted model.
    ///
    /// Robust: anyone can advertise a receiver's calibration identity (its id's hash is no
    /// secret), so the fit is iteratively reweighted (`spreadWeight`, `residualWeight`), and
    /// what it returns is within what the configuration takes (exponent 1.2…6, `rssi_at_1m`
    /// −127…20).
    public func fit(previous: [String: ReceiverCalibration] = [:], tagOffset: Double = 0) -> [RSSICalibration.Fit] {
        let usable = pairs.filter { $0.samples >= Self.minimumSamples }
        guard !usable.isEmpty else { return [] }
        var slot: [String: Int] = [:]
        for p in usable {
            for id in [p.hearer, p.advertiser] where slot[id] == nil { slot[id] = slot.count }
        }
        let exponents = slot.keys.map { previous[$0]?.pathLossExponent ?? 2 }.sorted()
        let priorExponent = exponents[exponents.count / 2]
        let s = Self.pairShadowingDB
        var x: [Double] = []
        var weights = usable.map(Self.spreadWeight)
        for _ in 0..<Self.robustPasses {
            var system = NormalEquations(unknowns: 2 + slot.count)
            for (p, w) in zip(usable, weights) where w > 0 {
                system.add(
                    [(0, 1), (1, -10 * log10(p.distance)), (2 + slot[p.hearer]!, 1), (2 + slot[p.advertiser]!, 1)],
                    p.meanRSSI, weight: w)
            }
            system.add([(1, 1)], priorExponent, weight: pow(s / Self.exponentSpread, 2))
            for i in 0..<slot.count { system.add([(2 + i, 1)], 0, weight: pow(s / Self.gainSpreadDB, 2)) }
            guard let solved = system.solve() else { return [] }
            x = solved
            weights = zip(usable, usable.map(Self.spreadWeight)).map { p, spread in
                let r =
                    p.meanRSSI
                    - (x[0] + x[2 + slot[p.hearer]!] + x[2 + slot[p.advertiser]!]
                        - 10 * x[1] * log10(p.distance))
                return spread * Self.residualWeight(r)
            }
        }
        // What the configuration takes: a fit is never suggested that `--check-config` refuses.
        x[1] = min(max(x[1], RSSICalibration.exponentRange.lowerBound), RSSICalibration.exponentRange.upperBound)
        let logs = usable.map { log10($0.distance) }
        let fitted = logs.max()! - logs.min()! >= RSSICalibration.minimumLogSpread
        var byHearer: [String: [Pair]] = [:]
        for p in usable { byHearer[p.hearer, default: []].append(p) }
        return byHearer.keys.sorted().map { id in
            let list = byHearer[id]!
            let old = previous[id] ?? ReceiverCalibration(rssiAt1m: -59, pathLossExponent: 2)
            func rms(_ predicted: (Pair) -> Double) -> Double {
                (list.reduce(0) { $0 + pow($1.meanRSSI - predicted($1), 2) } / Double(list.count)).squareRoot()
            }
            let before = rms { (old.rssiAt1m ?? -59) + tagOffset - 10 * old.pathLossExponent * log10($0.distance) }
            let after = rms {
                x[0] + x[2 + slot[$0.hearer]!] + x[2 + slot[$0.advertiser]!] - 10 * x[1] * log10($0.distance)
            }
            return RSSICalibration.Fit(
                receiver: id, rssiAt1m: min(max(x[0] + x[2 + slot[id]!] - tagOffset, -127), 20),
                pathLossExponent: x[1],
                exponentFitted: fitted, samples: list.count, rmsBefore: before, rmsAfter: after)
        }
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

extension RSSICalibration.Fit {
    /// A fit as `json` wrote it (what `beaconctl calibrate --auto` reads back); nil when a
    /// member is missing or of the wrong type.
    public init?(json: JSONValue) {
        guard let receiver = json["receiver"]?.stringValue, let pairs = json["pairs"]?.numberValue,
            let a = json["rssi_at_1m"]?.numberValue, let n = json["path_loss_exponent"]?.numberValue,
            case let .bool(fitted)? = json["exponent_fitted"],
            let before = json["rms_before_db"]?.numberValue, let after = json["rms_after_db"]?.numberValue
        else { return nil }
        self.init(
            receiver: receiver, rssiAt1m: a, pathLossExponent: n, exponentFitted: fitted, samples: Int(pairs),
            rmsBefore: before, rmsAfter: after)
    }

    /// As `/v1/calibration` and the site's retained `calibration` topic give it.
    public var json: JSONValue {
        func rounded(_ v: Double, _ places: Double = 10) -> JSONValue { .number((v * places).rounded() / places) }
        return .object([
            ("receiver", .string(receiver)), ("pairs", .number(Double(samples))), ("rssi_at_1m", rounded(rssiAt1m)),
            ("path_loss_exponent", rounded(pathLossExponent, 100)), ("exponent_fitted", .bool(exponentFitted)),
            ("rms_before_db", rounded(rmsBefore)), ("rms_after_db", rounded(rmsAfter)),
        ])
    }
}

extension RetainedState {
    /// `calibration`: the locator's fit of every receiver to the others' calibration
    /// advertisements (`beaconctl calibrate --auto`), for whoever watches a site's radios
    /// from the broker. nil while nothing has been heard enough to fit. A change of the fit
    /// by half a dB or 0.05 in the exponent is sent at once; the rest once a minute.
    public static func calibration(
        topics: SiteTopics, _ c: AutoCalibration, fits: [RSSICalibration.Fit], tagOffset: Double
    )
        -> Message?
    {
        guard !fits.isEmpty else { return nil }
        let payload = JSONValue.object([
            ("uuid", .string(c.uuid.description)), ("since", .string(RFC3339.format(c.since))),
            ("tag_offset_db", .number(tagOffset)), ("fits", .array(fits.map(\.json))),
        ])
        let significant = fits.map {
            "\($0.receiver) \(($0.rssiAt1m * 2).rounded() / 2) \(($0.pathLossExponent * 20).rounded() / 20)"
        }
        return Message(
            topic: topics[.calibration], payload: payload.serialized, qos: 1,
            significant: significant.joined(separator: ","))
    }
}
