#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Asset tracking at the edge: per asset and receiver a smoothed RSSI (the same median +
/// EMA filter as ranging), a position fix every tick from the strongest receivers, a motion
/// limit, zone membership with hysteresis, and the alarms' `zone.*` events.
///
/// Pure, like the rest of the core: `observe` takes readings, `tick` is called at each
/// positioning tick with the time, and both return what happened.
public struct AssetTracker: Sendable {
    public private(set) var settings: PositioningSettings
    /// The site and calibrations it was built from (a reload compares them).
    let definition: SiteConfiguration
    let calibrationTable: [String: ReceiverCalibration]
    let receivers: [SiteReceiver]
    let receiverIndex: [String: Int]
    let calibrations: [ReceiverCalibration?]
    let assets: [AssetDefinition]
    /// Each asset's index by its id: a reload and a restore look every asset up by id, and a
    /// scan each made them quadratic in the assets (issue 51, item 17).
    let assetIndex: [String: Int]
    let byAddress: [String: Int]
    /// The same, by the 48 bits of each address written `AA:BB:CC:DD:EE:FF`: a sighting's
    /// address is looked up without being written out.
    let byAddressValue: [UInt64: Int]
    /// The assets' identity resolving keys: phones and watches that change their address.
    public internal(set) var resolver: AddressResolver
    var zones: [ZoneRuntime]
    var alarms: [AlarmDefinition]
    /// For each zone, the alarms watching it.
    var alarmsByZone: [[Int]]
    var states: [AssetState]
    /// `positioning.floor`, when given.
    var floor: Polygon? { locator.floor }
    /// The floor's cells for the Bayes locator (nil: least squares on smoothed ranges).
    var grid: PositionGrid? { locator.grid }
    /// The tick's per-asset half: fixes and beliefs, run on many threads when lent them.
    let locator: AssetLocator
    /// Time after which an asset not heard at all has left every zone.
    var lostAfter: TimeSpan
    /// Whether changes of zone membership are kept in `transitions` for the zone analytics
    /// (the daemon's; a replay or a benchmark does without), and those not yet taken.
    var recordsTransitions = false
    var transitions: [ZoneTransition] = []
    /// Transitions kept but not yet let into `transitions`, by time: each waits
    /// `VisitRules.settleTime` after its time, so that a visit's enter, decided up to that
    /// late, reaches the store in time order with the rest (`releaseSettled`).
    var held: [ZoneTransition] = []
    /// How many times an asset × zone began to flap (`beacond_zone_flapping_total`), and how
    /// many flap now (`/v1/status`).
    public internal(set) var flappingBegun = 0
    public internal(set) var flappingNow = 0
    public internal(set) var work = BeliefWork()
    /// With the transitions: where the placed assets were at each tick, since last taken.
    var heat = HeatMap()
    /// Receivers that heard an asset but have no position in `receivers:`, with how many of
    /// its sightings each (at most `unplacedLimit` names). Their readings cannot place
    /// anything, and a receiver id that differs between a relay (or an adapter) and the
    /// configuration is the usual reason positions never come: `/v1/status` and
    /// `beaconctl doctor` name them.
    public internal(set) var unplacedReceivers: [String: Int] = [:]
    /// Addresses asset identity frames came from, for their telemetry frames.
    var learnedAddresses: [LearnedAddress: Int] = [:]
    /// When a battery is low and a tag missing (`tags:`).
    var tagRules: TagRules
    static let unplacedLimit = 16

    /// Seconds: the RSSI filter's time constant for positions, shorter than ranging's 3 s
    /// because tags move (at walking pace a 3 s lag is 3 m behind); measured best on the
    /// simulated flat and the kolakowski recording (BENCHMARKS.md).
    static let rssiTimeConstant = 2.0
    /// A reading counts for a fix for this long after it was heard.
    public static let readingFreshness = TimeSpan.seconds(5)
    /// Measured power assumed for tags that give none and receivers without calibration.
    public static let defaultRSSIAt1m = -59.0

    struct Reading: Sendable {
        var filter: RSSIFilter
        var lastSeen: Timestamp
        var frameRSSIAt1m: Double?
    }

    /// One receiver's packets of a tick: RSSI sum, sum of squares and count, for their mean
    /// and their spread.
    struct PacketSums: Sendable {
        var sum = 0.0
        var squares = 0.0
        var count = 0

        mutating func add(_ rssi: Int) {
            let x = Double(rssi)
            sum += x
            squares += x * x
            count += 1
        }
    }

    struct AssetState: Sendable {
        var readings: [Int: Reading] = [:]
        var lastHeard: Timestamp?
        /// After a restart, or while the gateway's radios are blind, an asset in zones is not
        /// lost before this: it gets `lostAfter` from the restart, or from when they hear
        /// again, to be heard (as a region's exit waits, see `RegionMonitor.hold`).
        var hold: ExitHold?
        var estimate: AssetFix?
        var estimatedAt: Timestamp?
        var published: AssetFix?
        var publishedAt: Timestamp?
        var zones: [ZoneMembership]
        var lost = false
        /// The tag's pace at the receiver that hears it best: it is not lost sooner than
        /// three of its intervals (SPEC §7.3).
        var interval = AdvertisingInterval()
        /// Battery, temperature, movement, from its telemetry frames.
        var telemetry = TagTelemetry()
        /// Its battery is below `battery_low` and that was told (re-armed above it).
        var batteryLow = false
        /// Since when a told battery has read back above the re-arm level, without a reading
        /// under it since (`TagRules.rearmAfter`).
        var batteryBackSince: Timestamp?
        /// Missing since then (SPEC §7.4), last heard at `missingLastSeen`; heard again at
        /// `heardAgainAt` (told at the next tick, with its position).
        var missingSince: Timestamp?
        var missingLastSeen: Timestamp?
        var heardAgainAt: Timestamp?
        /// After a restart, not missing before this (`missingGraceAfterRestart`).
        var missingNotBefore: Timestamp?
        /// A start resumed a counted visit of this asset, never heard since: told by then.
        var resumedUnheardUntil: Timestamp?
        /// The Bayes locator's belief, its level and when it was last moved.
        var belief: PositionBelief?
        var beliefLevel = 0
        var beliefAt: Timestamp?
        /// What the tag heard since it last moved (`StillAnchor`), since when it moves (nil
        /// while it stands), and the anchor's cells at this tick while they place it.
        var anchor: StillAnchor?
        /// The anchor the readings last left, while it may still be where the tag stands.
        var left: StillAnchor?
        /// Ticks running the belief has been `follow` from the place `left`.
        var awayTicks = 0
        var movingSince: Timestamp?
        var stillCells: [Float]?
        /// The belief settled and held while its readings stay (`BeliefHold`), and each
        /// receiver's recent readings it is held against.
        var settled: BeliefHold?
        var recent = RecentReadings()
        /// Per zone: the belief's mass inside it at the last fix (0 off its level).
        var zoneMass: [Double] = []
        /// Packets heard since the last tick, per receiver.
        var heard: [Int: PacketSums] = [:]
    }

    public init(
        site: SiteConfiguration, calibrations: [String: ReceiverCalibration], lostAfter: TimeSpan, start: Timestamp
    ) {
        settings = site.positioning
        definition = site
        calibrationTable = calibrations
        receivers = site.receivers
        receiverIndex = Dictionary(site.receivers.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { a, _ in a })
        self.calibrations = site.receivers.map { calibrations[$0.id] }
        assets = site.assets
        assetIndex = Dictionary(site.assets.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { a, _ in a })
        var addresses: [String: Int] = [:]
        for (i, asset) in site.assets.enumerated() {
            if case let .address(a) = asset.tag { addresses[a] = i }
        }
        byAddress = addresses
        byAddressValue = Dictionary(
            addresses.compactMap { text, i in Sighting.addressValue(Array(text.utf8)).map { ($0, i) } },
            uniquingKeysWith: { a, _ in a })
        resolver = AddressResolver(
            keys: site.assets.enumerated().compactMap { i, asset in
                if case let .irk(key) = asset.tag { (i, key) } else { nil }
            })
        zones = site.zones.map { [receiverIndex] in
            ZoneRuntime($0, receivers: receiverIndex, hysteresis: site.positioning.zoneHysteresis)
        }
        alarms = site.alarms
        let zoneIndex = Dictionary(site.zones.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { a, _ in a })
        var watching = [[Int]](repeating: [], count: site.zones.count)
        for (a, alarm) in site.alarms.enumerated() {
            for zone in alarm.zones { if let z = zoneIndex[zone] { watching[z].append(a) } }
        }
        alarmsByZone = watching
        for z in zones.indices {
            let confirm = watching[z].map { site.alarms[$0].confirm }.min() ?? AlarmDefinition.defaultConfirm
            zones[z].confirm = confirm
            zones[z].alarmConfirms = Dictionary(
                watching[z].compactMap { site.alarms[$0].confirm == confirm ? nil : ($0, site.alarms[$0].confirm) },
                uniquingKeysWith: { a, _ in a })
        }
        states = site.assets.map { [zones] _ in AssetState(zones: zones.map { ZoneMembership(at: start, zone: $0) }) }
        self.lostAfter = lostAfter
        tagRules = site.tags
        let floor = site.positioning.floor.map(Polygon.init)
        let grid: PositionGrid?
        // The belief lives on the floor's cells: without an outline there is no extent to
        // give it (tags are heard 30 m beyond the receivers), so least squares it is.
        if site.positioning.estimator == .bayes, let outline = floor, !site.receivers.isEmpty {
            grid = PositionGrid(
                receivers: site.receivers, calibrations: site.receivers.map { calibrations[$0.id] }, floor: outline,
                tagHeight: site.positioning.tagHeight, motion: MotionModel(site.positioning.motion),
                bodyLoss: site.positioning.bodyLossDB)
        } else {
            grid = nil
        }
        if let grid {
            for z in zones.indices {
                guard case let .polygon(_, outline, _) = zones[z].shape else { continue }
                zones[z].cells = (0..<grid.count).filter { grid.onFloor[$0] && outline.contains(grid.center($0)) }
            }
        }
        locator = AssetLocator(
            settings: settings, receivers: receivers, calibrations: self.calibrations, floor: floor, grid: grid,
            zoneCells: zones.map { zone in
                guard case let .polygon(level, _, _) = zone.shape else { return nil }
                return (level, zone.cells)
            })
    }

    public var isEmpty: Bool { assets.isEmpty }
    /// The positioning tick: fixes are made this often, positions published at most every
    /// `publish_interval`.
    public var tickInterval: TimeSpan { min(settings.publishInterval, .seconds(1)) }

    /// The asset whose tag sends from this address given as text (a sighting whose address
    /// has no 48-bit form), if any.
    func asset(address: String) -> Int? {
        guard !byAddress.isEmpty else { return nil }
        if let a = byAddress[address] { return a }
        return address.utf8.contains(where: { $0 >= 0x61 && $0 <= 0x7A }) ? byAddress[address.uppercased()] : nil
    }

    /// The asset whose `beacon: {address}` sent `sighting`, read from its address's bits.
    public func asset(of sighting: Sighting) -> Int? {
        guard !byAddress.isEmpty else { return nil }
        if sighting.rare?.address == nil { return byAddressValue[sighting.addressValue] }
        return asset(address: sighting.address)
    }

    /// The asset whose identity resolving key resolves the sighting's address (SPEC §9).
    public mutating func resolve(_ sighting: Sighting) -> Int? {
        guard !resolver.isEmpty else { return nil }
        if let address = sighting.bluetoothAddress {
            return resolver.asset(address: address, public: sighting.addressKind == .public)
        }
        return resolver.asset(address: sighting.address, type: sighting.addressType)
    }

    /// The asset whose tag is this beacon identity, if any.
    /// The asset whose identity resolving key resolves `address` (SPEC §9); nil at once when
    /// no asset has a key.
    public mutating func resolve(address: String, type: String?) -> Int? {
        resolver.isEmpty ? nil : resolver.asset(address: address, type: type)
    }

    public func asset(identity: BeaconIdentity) -> Int? {
        assets.firstIndex { $0.tag.matches(identity) }
    }

    /// Alarms switched on or off at runtime (`PATCH /v1/alarms/{id}`); false if unknown.
    public mutating func setAlarm(_ id: String, active: Bool) -> Bool {
        guard let i = alarms.firstIndex(where: { $0.id == id }) else { return false }
        alarms[i].active = active
        return true
    }

    public func alarmIsActive(_ id: String) -> Bool? { alarms.first { $0.id == id }?.active }

    /// The latest estimate of each asset (nil when never located), in configuration order.
    public var fixes: [(id: String, fix: AssetFix?, lastHeard: Timestamp?)] {
        assets.indices.map { (assets[$0].id, states[$0].estimate, states[$0].lastHeard) }
    }

    /// How long asset `a` must be silent to be lost: `lostAfter`, or three of its tag's
    /// intervals when that is longer. Before its second packet its pace is not known, and a
    /// tag that advertises every 10 s would be lost between its first two packets (an exit and
    /// an enter, both false, for every new slow tag): until then it waits for the longest pace
    /// that is learned (60 s), as Home Assistant waits longer for a device whose interval it
    /// has not learned. Only a tag heard once and never again pays for it.
    func lostAfter(_ a: Int) -> TimeSpan {
        guard states[a].interval.interval != nil else { return max(lostAfter, AdvertisingInterval.longest) }
        return max(lostAfter, states[a].interval.patience)
    }

    /// Assets heard once and then not for `lostAfter`: off site (Home Assistant's `not_home`).
    public var lostAssetIDs: Set<String> {
        Set(assets.indices.filter { states[$0].lost }.map { assets[$0].id })
    }

    /// One positioning tick at `t`: a fix for every asset heard recently, zone changes, and
    /// the positions due for publishing. The fixes are made first, for every asset at once
    /// (on `runner`'s threads when given); what they mean is then told asset by asset in
    /// configuration order, so the events are the same whatever the threads.
    public mutating func tick(at t: Timestamp, events: inout [Event], runner: (any ShardRunner)? = nil) {
        let located = locateAll(at: t, runner: runner)
        for a in assets.indices {
            checkMissing(a, at: t, events: &events)
            guard let fix = located[a] else {
                tellFound(a, at: t, events: &events)
                if let heard = states[a].lastHeard, !states[a].lost, t - heard >= lostAfter(a),
                    states[a].hold?.allows(t) ?? true
                {
                    lose(a, at: t, events: &events)
                } else if !states[a].lost {
                    smoothUnheard(a, at: t, events: &events)
                }
                continue
            }
            states[a].lost = false
            var estimate = limitSpeed(a, fix.fix, at: t)
            updateZones(a, estimate: estimate, ranges: fix.ranges, at: t, events: &events)
            estimate.zones = zones.indices.filter { states[a].zones[$0].inside }.map { zones[$0].id }
            estimate.flapping = zones.indices.filter { states[a].zones[$0].decision.flappingSince != nil }.map {
                zones[$0].id
            }
            estimate.moving = motion(a)?.moving
            smoothVisits(a, evidence: true, at: t, events: &events)
            states[a].estimate = estimate
            states[a].estimatedAt = t
            if recordsTransitions { heat.add(estimate.position, level: estimate.level, for: tickInterval) }
            tellFound(a, at: t, events: &events)
            publishIfDue(a, estimate, at: t, events: &events)
        }
        releaseSettled(upTo: t - visitRules.settleTime)
    }

}

extension BeaconEngine {
    /// Switches an alarm on or off (`PATCH /v1/alarms/{id}`); false when there is no such alarm.
    @discardableResult
    public mutating func setAlarm(_ id: String, active: Bool) -> Bool {
        tracker?.setAlarm(id, active: active) ?? false
    }
}

/// How many beliefs a tick moved in full, and how many it held because their evidence had
/// not left them (issue 64): what a still tag saves, for `/metrics` and the benchmarks.
public struct BeliefWork: Sendable, Equatable {
    public var full = 0
    public var held = 0
    public init() {}
}
