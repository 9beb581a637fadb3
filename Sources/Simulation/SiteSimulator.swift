import BeaconConfig
import BeaconCore

#if canImport(Glibc)
    import Glibc
#endif

/// A simulated site: tags walking and standing among receivers, heard through a radio
/// channel with log-distance path loss, correlated log-normal shadowing, Rayleigh fast
/// fading, reflections, walls, the carrier's body and packet loss. It produces sighting
/// records as receivers would report them, and the ground truth: where each tag really was
/// and when it really entered and left each zone.
///
/// Deterministic for a seed; driven by explicit time steps, so `beacond simulate` writes a
/// trace as fast as it can and `beacond --simulate` paces the same model on the wall clock.
public struct SiteSimulator: Sendable {
    public struct TruthPosition: Sendable, Equatable {
        public var time: Timestamp
        public var asset: String
        public var position: Point
        public var zones: [String]
    }

    /// A true crossing of a zone's edge: the analytics' own transition, so that the truth and
    /// beacond's figures are counted by the same code (`ZoneHours`).
    public typealias TruthTransition = ZoneTransition

    public let settings: SimulationSettings
    let receivers: [SiteReceiver]
    let assets: [AssetDefinition]
    let zoneIDs: [String]
    /// Each zone as the truth tests it: an outline, or a receiver's position and radius.
    enum ZoneTest: Sendable {
        case outline(Polygon)
        case near(Point, within: Double)
        case none
    }
    let zones: [ZoneTest]
    let outlines: [Polygon]
    let tagHeight: Double?
    var random: SeededRandom
    var walkers: [TagWalker]
    /// Per tag and receiver: the shadowing (dB) and where the tag was when it was drawn.
    var shadowing: [[(value: Double, at: Point)]]
    var inside: [[Bool]]
    public private(set) var now: Timestamp
    let step: TimeSpan
    /// Each receiver's antenna gain (dB, `simulation.receiver_gain_db`), for what it hears and
    /// what it sends: the spread between radios that calibration is for.
    public let receiverGains: [Double]
    /// The receivers' own advertisements, with `calibration.advertise`.
    var calibration: CalibrationChannel?
    /// Per asset: its own pace, telemetry and battery (`simulation.tags`), or nil for a tag
    /// that sends its identity once a step.
    var schedules: [TagSchedule?]
    /// Per asset without a schedule: where in the step it sends (a fraction of the step).
    let phases: [Double]
    /// Each phone's address and the period it is for (`SiteSimulator+Phones`).
    var phoneAddresses: [Int: (period: Int64, address: String)] = [:]
    /// Each tag's identity advertisement (its address and data), made at its first packet:
    /// a step of a thousand tags copies these instead of building a payload per sighting.
    var identities: [Sighting?] = []
    /// The receivers' interned names, by index.
    var receiverIDs: [ReceiverID] = []

    public init(config: Config, settings: SimulationSettings, seed: UInt64, start: Timestamp) {
        let site = config.siteModel
        self.settings = settings
        receivers = site.receivers
        assets = site.assets
        zoneIDs = site.zones.map(\.id)
        zones = site.zones.map { zone in
            switch zone.shape {
            case let .polygon(_, points): return .outline(Polygon(points))
            case let .nearReceiver(receiver, within):
                guard let r = site.receivers.first(where: { $0.id == receiver }) else { return .none }
                return .near(r.position, within: within)
            }
        }
        outlines = zones.compactMap { if case let .outline(p) = $0 { return p } else { return nil } }
        tagHeight = site.positioning.tagHeight
        random = SeededRandom(seed: seed)
        now = start
        let step = TimeSpan.milliseconds(Int64((1000 / settings.advertisingHz).rounded()))
        self.step = step
        let plans = Dictionary(settings.tags.map { ($0.asset, $0) }, uniquingKeysWith: { first, _ in first })
        var schedules: [TagSchedule?] = site.assets.enumerated().map { a, asset in
            plans[asset.id].map {
                TagSchedule(
                    tag: $0, defaultInterval: step, start: start, seed: seed ^ (0x7A6_0000_0000_0000 + UInt64(a)))
            }
        }
        let unscheduled = schedules.indices.filter { schedules[$0] == nil }
        var phases = [Double](repeating: 0, count: schedules.count)
        for (k, a) in unscheduled.enumerated() { phases[a] = Double(k) / Double(unscheduled.count) }
        self.phases = phases
        var walkers: [TagWalker] = []
        for a in site.assets.indices {
            // A scheduled tag draws from its own stream, here and at every step.
            if schedules[a] != nil { swap(&random, &schedules[a]!.random) }
            let p = Point(x: random.uniform() * settings.width, y: random.uniform() * settings.depth)
            let pause = Int64(random.uniform() * settings.pause.upperBound.seconds * 1000)
            if let stand = schedules[a]?.tag.standsAt {
                // Put down for the whole run (it never picks a destination), or until picked up.
                let until = schedules[a]?.tag.pickedUpAfter.map { start + $0 } ?? .seconds(Int64.max / 2_000_000_000)
                var walker = TagWalker(position: stand, heading: 0, pausedUntil: until)
                walker.carried = false
                walkers.append(walker)
            } else {
                walkers.append(
                    TagWalker(
                        position: p, heading: random.uniform() * 2 * Double.pi,
                        pausedUntil: start + .milliseconds(pause)))
            }
            if schedules[a] != nil { swap(&random, &schedules[a]!.random) }
        }
        self.walkers = walkers
        var shadowing: [[(value: Double, at: Point)]] = []
        for (a, w) in walkers.enumerated() {
            if schedules[a] != nil { swap(&random, &schedules[a]!.random) }
            var row: [(value: Double, at: Point)] = []
            for _ in site.receivers { row.append((random.gaussian() * settings.sigmaDB, w.position)) }
            shadowing.append(row)
            if schedules[a] != nil { swap(&random, &schedules[a]!.random) }
        }
        self.shadowing = shadowing
        self.schedules = schedules
        inside = site.assets.map { _ in site.zones.map { _ in false } }
        // Drawn from a stream of their own: the tags' draws stay as they were.
        var gains = SeededRandom(seed: seed ^ 0x6A1_0000_0000_0002)
        receiverGains = site.receivers.map { _ in settings.receiverGainDB * gains.gaussian() }
        if config.calibration.advertise {
            calibration = CalibrationChannel(
                receivers: site.receivers, uuid: config.calibration.uuid, sigmaDB: settings.sigmaDB, seed: seed)
        }
    }

    /// Advances one advertising interval: every tag moves, advertises once, and each receiver
    /// hears it or not. Returns the sightings (in time order), the true positions and the
    /// true zone transitions of this step.
    public mutating func advance() -> (sightings: [Sighting], truth: [TruthPosition], transitions: [TruthTransition]) {
        let dt = step.seconds
        now = now + step
        var sightings: [Sighting] = []
        var truth: [TruthPosition] = []
        var transitions: [TruthTransition] = []
        for a in walkers.indices {
            let scheduled = schedules[a] != nil
            if scheduled { swap(&random, &schedules[a]!.random) }
            walkers[a].advance(to: now, dt: dt, settings: settings, zones: outlines, random: &random)
            let p = walkers[a].position
            var zonesNow: [String] = []
            for z in zones.indices {
                let isInside = contains(z, p)
                if isInside { zonesNow.append(zoneIDs[z]) }
                if isInside != inside[a][z] {
                    inside[a][z] = isInside
                    transitions.append(
                        TruthTransition(zone: zoneIDs[z], asset: assets[a].id, entered: isInside, time: now))
                }
            }
            truth.append(TruthPosition(time: now, asset: assets[a].id, position: p, zones: zonesNow))
            if scheduled {
                sendScheduled(a, into: &sightings)
                swap(&random, &schedules[a]!.random)
                continue
            }
            // Each tag sends at its own phase within the interval.
            let sent = now - .milliseconds(Int64(phases[a] * step.seconds * 1000))
            for r in receivers.indices {
                guard let rssi = heard(tag: a, receiver: r) else { continue }
                sightings.append(sighting(asset: a, receiver: r, rssi: rssi, at: sent))
            }
        }
        if var channel = calibration {
            sightings += channel.advance(at: now, simulator: self)
            calibration = channel
        }
        sightings.sort { $0.time < $1.time }
        return (sightings, truth, transitions)
    }

    func contains(_ z: Int, _ p: Point) -> Bool {
        switch zones[z] {
        case let .outline(polygon): return polygon.contains(p)
        case let .near(center, within): return distance(p, center) <= within
        case .none: return false
        }
    }

    /// A scheduled tag's advertising events of this step (none once it is switched off):
    /// its identity frame, or telemetry in its place, from the tag's address.
    mutating func sendScheduled(_ a: Int, into sightings: inout [Sighting]) {
        let times = schedules[a]!.due(until: now, random: &random)
        let (address, byAddress): (String, Bool)
        if case let .address(own) = assets[a].tag {
            (address, byAddress) = (own, true)
        } else {
            (address, byAddress) = (Self.address(a), false)
        }
        for t in times where schedules[a]!.isOn(at: t) {
            let n = schedules[a]!.events
            schedules[a]!.events += 1
            if walkers[a].destination != nil { schedules[a]!.movements += 1 }
            let telemetry =
                schedules[a]!.sendsTelemetry(event: n, tagIsAddress: byAddress)
                ? schedules[a]!.telemetry(event: n, at: t, address: address) : nil
            for r in receivers.indices {
                guard let rssi = heard(tag: a, receiver: r, since: schedules[a]!.interval) else { continue }
                guard let (m, s) = telemetry else {
                    sightings.append(sighting(asset: a, receiver: r, rssi: rssi, at: t))
                    continue
                }
                sightings.append(
                    Sighting(
                        time: t, receiver: receivers[r].id, address: address, rssi: rssi,
                        manufacturerData: m.map { [$0] } ?? [], serviceData: s.map { [$0] } ?? []))
            }
        }
    }

    /// The RSSI receiver `r` reports for tag `a`'s packet, or nil when it is not heard;
    /// `since`: how long since the tag's last packet (a step, unless it has a pace of its own).
    mutating func heard(tag a: Int, receiver r: Int, since: TimeSpan? = nil) -> Int? {
        if random.uniform() < settings.packetLoss { return nil }
        let tag = walkers[a]
        let receiver = receivers[r]
        var d = distance(tag.position, receiver.position)
        if let z = receiver.z, let h = tagHeight { d = (d * d + (z - h) * (z - h)).squareRoot() }
        d = max(d, 0.1)
        var rssi = settings.rssiAt1m - 10 * settings.pathLossExponent * log10(d) + receiverGains[r]
        rssi -= updatedShadowing(tag: a, receiver: r, since: since ?? step)
        for wall in settings.walls where Polygon.segmentsMeet(tag.position, receiver.position, wall.from, wall.to) {
            rssi -= wall.lossDB
        }
        // The body sits behind the direction of travel: a receiver behind the carrier loses most.
        let bearing = atan2(receiver.position.y - tag.position.y, receiver.position.x - tag.position.x)
        if tag.carried { rssi -= settings.bodyLossDB * max(0, -cos(bearing - tag.heading)) }
        if settings.fastFading {
            // Rayleigh: |h|² ~ Exp(1); in dB a long weak tail. E[10 log10 |h|²] = -2.507 dB
            // (Euler's γ), added back so that the mean RSSI at 1 m is `rssi_at_1m`, which is
            // what a calibration measures. (Until 2026-11-23 the fading was normalised by its
            // median, leaving the channel 0.92 dB weaker on average than its calibration said.)
            rssi += 10 * log10(max(-log(max(random.uniform(), 1e-12)), 1e-4)) + 2.507
        }
        if settings.noiseDB > 0 { rssi += settings.noiseDB * random.gaussian() }
        if random.uniform() < settings.multipath { rssi -= 3 + 9 * random.uniform() }
        let value = Int(rssi.rounded())
        return value >= -100 ? value : nil
    }

    /// Shadowing decorrelates as the tag moves (over `shadowingDistance`) and with time
    /// (over `shadowingTime`), a first-order Gauss–Markov process in both.
    mutating func updatedShadowing(tag a: Int, receiver r: Int, since: TimeSpan) -> Double {
        let previous = shadowing[a][r]
        let moved = distance(previous.at, walkers[a].position)
        let rho = exp(-moved / settings.shadowingDistance - since.seconds / settings.shadowingTime.seconds)
        let value = rho * previous.value + (1 - rho * rho).squareRoot() * settings.sigmaDB * random.gaussian()
        shadowing[a][r] = (value, walkers[a].position)
        return value
    }

    mutating func sighting(asset a: Int, receiver r: Int, rssi: Int, at t: Timestamp) -> Sighting {
        if identities.isEmpty {
            identities = Array(repeating: nil, count: assets.count)
            receiverIDs = receivers.map { ReceiverID($0.id) ?? .unlisted }
        }
        var sighting = identities[a] ?? identity(asset: a)
        identities[a] = sighting
        if case let .irk(key) = assets[a].tag { sighting.address = phoneAddress(a, key: key, at: t) }
        sighting.time = t
        sighting.rssi = rssi
        if receiverIDs[r] == .unlisted {
            sighting.receiver = receivers[r].id
        } else {
            sighting.receiverID = receiverIDs[r]
        }
        return sighting
    }

    /// Tag `a`'s advertisement, heard by no one yet.
    func identity(asset a: Int) -> Sighting {
        let index = UInt16(truncatingIfNeeded: a)
        switch assets[a].tag {
        case let .address(address):
            return Sighting(time: now, receiver: "", address: address, rssi: 0)
        case .irk:
            return Sighting(time: now, receiver: "", address: "", addressType: "random", rssi: 0)
        case let .ibeacon(uuid, major, minor):
            let payload = IBeaconID(uuid: uuid, major: major ?? 0, minor: minor ?? index)
                .payload(measuredPower: Int(settings.rssiAt1m.rounded()))
            return Sighting(
                time: now, receiver: "", address: Self.address(a), rssi: 0,
                manufacturerData: [ManufacturerDatum(company: 0x004C, payload: payload)])
        case let .eddystone(namespace, instance):
            let bytes =
                [UInt8(0x00), UInt8(bitPattern: Int8(max(-128, min(127, Int(settings.rssiAt1m.rounded()) - 41))))]
                + (Hex.decode(namespace) ?? []) + (Hex.decode(instance) ?? []) + [0, 0]
            return Sighting(
                time: now, receiver: "", address: Self.address(a), rssi: 0,
                serviceData: [ServiceDatum(uuid: "0000feaa-0000-1000-8000-00805f9b34fb", payload: bytes)])
        }
    }

    static func address(_ a: Int) -> String {
        let hex = Array("0123456789ABCDEF")
        return "C0:5E:00:00:\(hex[(a >> 12) & 15])\(hex[(a >> 8) & 15]):\(hex[(a >> 4) & 15])\(hex[a & 15])"
    }
}

func distance(_ a: Point, _ b: Point) -> Double {
    ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
}

/// The truth file's lines: `{"kind":"position",...}` per tag per step and
/// `{"kind":"zone","event":"enter"|"exit",...}` per true zone transition.
extension SiteSimulator.TruthPosition {
    public var json: JSONValue {
        .object([
            ("kind", "position"), ("t", .number(time.unixSeconds)), ("asset", .string(asset)),
            ("x", .number((position.x * 1000).rounded() / 1000)), ("y", .number((position.y * 1000).rounded() / 1000)),
            ("zones", .array(zones.map { .string($0) })),
        ])
    }
}

extension ZoneTransition {
    /// The truth file's line for a true crossing.
    public var json: JSONValue {
        .object([
            ("kind", "zone"), ("t", .number(time.unixSeconds)), ("asset", .string(asset)), ("zone", .string(zone)),
            ("event", .string(entered ? "enter" : "exit")),
        ])
    }
}
