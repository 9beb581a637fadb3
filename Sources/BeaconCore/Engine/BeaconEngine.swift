/// The whole beacon engine: decoding, region monitoring and ranging, as one value.
///
/// It is driven by two calls — `ingest` for each sighting and `advance(to:)` when
/// `nextDeadline` is reached — and returns the events they cause, each at the time of the
/// sighting or timer that caused it. It does no I/O and reads no clock, so the live daemon,
/// `beacond replay` and the tests all run exactly the same code on their own clocks.
///
/// Cost per sighting is O(1) in the number of beacons and regions: one dictionary lookup for
/// the beacon, a cached list of the regions it matches, and no timer-heap work (timers are
/// re-checked lazily when they come due).
public struct BeaconEngine: Sendable {
    public internal(set) var settings: MonitoringSettings
    /// The engine's clock: the latest time it was given. It never goes backwards; a late
    /// sighting (a remote receiver's clock behind ours) is processed at this time. Only a step
    /// of the wall clock moves it back, with everything else the engine holds (`shiftClock`).
    public internal(set) var now: Timestamp
    public internal(set) var counters = EngineCounters()

    /// Region state machines by slot. A removed region's slot keeps its stale value until it
    /// is reused: nothing reaches it (the index and the clients no longer name it, and its
    /// timers carry an old generation), and a non-optional array lets sightings mutate a
    /// region in place instead of copying it out and back.
    var regions: [RegionMonitor] = []
    /// Who monitors each region and how (cold: read only when a region changes state).
    var regionInfo: [RegionInfo] = []
    /// Three advertising intervals of the slowest beacon each region has heard (SPEC §7.3):
    /// it does not exit sooner than this after its last sighting, whatever `exit_timeout`
    /// says (its timers run on `settings(forRegion:)`). Zero until an interval is learned;
    /// raised when a beacon's learned pace is slower, never lowered, so a region of a slow
    /// and a fast tag does not exit between the slow one's packets once the fast one left.
    /// Beside the monitors, not in them, which a sighting reads and writes whole.
    var regionPatience: [TimeSpan] = []
    var generations: [UInt32] = []
    var freeRegionSlots: [Int32] = []
    var clients: [String: ClientRegions] = [:]
    var clientOrder: [String] = []
    var index: [RegionIndexKey: [Int32]] = [:]
    var indexGeneration: UInt32 = 0
    var timers = TimerHeap()

    var beaconSlots = BeaconSlotTable()
    var records: [BeaconRecord?] = []
    /// Each beacon slot's pace, learned at the receiver that hears it best: no region exits
    /// sooner than three of its intervals (SPEC §7.3). Beside the records, not in them: a
    /// record is copied on paths a sighting takes, and 80 more bytes in each cost the
    /// engine a tenth of its throughput (BENCHMARKS.md).
    var intervals: [AdvertisingInterval] = []
    var freeBeaconSlots: [Int32] = []
    var receiverIDs: [String: Int32] = [:]
    var receiverNames: [String] = []
    /// `ReceiverID.index` → the engine's receiver number, or -1 when not yet seen here.
    var slotOfReceiverID: [Int32] = []
    var receiverCalibration: [ReceiverCalibration?] = []
    /// Each receiver's sightings and when it was last heard (`tally`).
    var receiverHeard: [ReceiverTally] = []
    /// Each receiver's place among the site's placed receivers (`AssetTracker.receiverIndex`),
    /// -1 when it has none: found once, not by name at every sighting of an asset.
    var receiverPlace: [Int] = []
    let calibrations: [String: ReceiverCalibration]
    /// The receivers the configuration names (a position or a calibration): each always gets
    /// its place, however many made-up names a relay sent first (issue 51, item 5). Only the
    /// others count against `receiverLimit`.
    var configuredReceivers: Set<String>
    /// Receivers heard that the configuration did not name when they were first heard.
    var unconfiguredReceivers = 0

    /// Ranging regions (slots, in registration order) and the beacons each has heard recently.
    var rangingMembers: [Int32: Set<Int32>] = [:]
    var rangingSlots: [Int32] = []
    var rangingNonEmpty: Set<Int32> = []
    var nextRangingTick: Timestamp?
    var nextSweep: Timestamp
    var pending: [Event] = []
    /// Asset positions, zones and alarms; nil when no asset is configured.
    public internal(set) var tracker: AssetTracker?
    var nextPositionTick: Timestamp?
    /// `recordsZoneTransitions` for a tracker made by a later reload.
    var recordsZoneTransitionsWhenPlaced = false
    /// What the receivers hear of each other's calibration advertisements; nil with fewer
    /// than two receivers.
    public internal(set) var calibration: AutoCalibration?
    /// Threads lent for the tick's per-asset work (`engine.threads`); nil: the caller's alone.
    public var shardRunner: (any ShardRunner)?
    /// The gateway's radios hear nothing (`setBlind`).
    var blind = false

    /// How long a reading stays "recent" for ranging and proximity.
    public static let rangingFreshness = TimeSpan.seconds(5)
    /// Beacons not heard for this long (and at least 2 × exit_timeout) are forgotten.
    public static let beaconRetention = TimeSpan.minutes(10)
    /// Beacons remembered at most: a flood of made-up identities (spoofed over the air or
    /// posted by a relay) cannot grow memory past this; the stalest are forgotten first.
    public static let defaultBeaconLimit = 20_000
    /// Distinct receivers the configuration does not name remembered; sightings from a new one
    /// past this are dropped and counted (`EngineCounters.receiversRefused`). A site has a
    /// handful; relays add theirs. Configured receivers are never refused.
    public static let receiverLimit = 1024
    /// `defaultBeaconLimit`, unless a test sets another.
    public var beaconLimit = BeaconEngine.defaultBeaconLimit
    static let sweepInterval = TimeSpan.seconds(60)

    /// Starts the engine at `start` with the configured clients' regions being monitored.
    /// Regions over a client's limit produce `region.failed`, delivered with the first call.
    public init(configuration: EngineConfiguration, start: Timestamp) {
        settings = configuration.monitoring
        now = start
        calibrations = configuration.receivers
        configuredReceivers = Self.named(configuration.site, configuration.receivers)
        nextSweep = start + BeaconEngine.sweepInterval
        let tracker = AssetTracker(
            site: configuration.site, calibrations: configuration.receivers,
            lostAfter: configuration.monitoring.exitTimeout,
            start: start)
        calibration = AutoCalibration(
            receivers: configuration.site.receivers, uuid: configuration.site.calibrationUUID, start: start)
        if !tracker.isEmpty {
            self.tracker = tracker
            nextPositionTick = start + tracker.tickInterval
        }
        for client in configuration.clients {
            for region in client.regions {
                pending += monitor(client: client.id, region: region, at: start).events
            }
        }
    }

    /// The earliest time `advance(to:)` has work to do, or nil when only a sighting can cause
    /// an event. May be early (a timer that was pushed back); calling then is harmless.
    public var nextDeadline: Timestamp? {
        [timers.earliest, nextRangingTick, nextPositionTick].compactMap { $0 }.min()
    }

    /// Fires every timer due at or before `target`, in time order, each at its own time.
    public mutating func advance(to target: Timestamp) -> [Event] {
        var events = pending
        pending = []
        while true {
            // The earliest of region timers, the ranging tick and housekeeping.
            var next = nextSweep
            if let t = timers.earliest, t < next { next = t }
            if let r = nextRangingTick, r < next { next = r }
            if let p = nextPositionTick, p < next { next = p }
            guard next <= target else { break }
            if target - next >= Self.quietGap,
                skipQuietTicks(before: timers.earliest.map { min($0, target) } ?? target)
            {
                continue
            }
            now = max(now, next)
            if let e = timers.popDue(next) {
                fireRegionTimer(e, events: &events)
            } else if nextRangingTick == next {
                rangingTick(at: next, events: &events)
            } else if nextPositionTick == next {
                nextPositionTick = next + tracker!.tickInterval
                tracker!.tick(at: next, events: &events, runner: shardRunner)
            } else {
                sweep(at: next)
            }
        }
        now = max(now, target)
        return events
    }

    /// Live input, where the daemon's clock is the truth: a sighting stamped later than
    /// `latest` (a relay whose clock runs fast) is taken at `latest`, and counted when it is
    /// over `clockAheadTolerance` ahead. Taken at its own time it would move the engine's clock
    /// ahead, fire every exit and dwell timer due before it at once, and stamp what follows in
    /// the relay's future.
    public mutating func ingest(_ sighting: Sighting, notAfter latest: Timestamp) -> [Event] {
        guard sighting.time > latest else { return ingest(sighting) }
        if sighting.time - latest > Self.clockAheadTolerance { counters.clockAheadSightings += 1 }
        var taken = sighting
        taken.time = latest
        return ingest(taken)
    }

    /// Relays' clocks synchronised by NTP agree to milliseconds, and records are stamped to
    /// the millisecond: only a larger lead is a clock to fix.
    public static let clockAheadTolerance = TimeSpan.seconds(1)

    /// Makes ready what `ingest` will need for `batch` that is cheaper done for all of it at
    /// once: the phones' new private addresses resolved together (`AddressResolver.prepare`).
    /// Optional: `ingest` alone gives the same events.
    public mutating func prepare(_ batch: [Sighting]) {
        if tracker != nil, !tracker!.resolver.isEmpty { tracker!.resolver.prepare(batch) }
    }

    /// Processes one sighting at its own time (after the timers due before it); one older
    /// than the engine's clock at the engine's time, or not at all when older than
    /// `exit_timeout`.
    public mutating func ingest(_ sighting: Sighting) -> [Event] {
        var events = advance(to: sighting.time)
        counters.sightings += 1
        if sighting.time < now {
            // Older than exit_timeout it is history, not presence: taken now, it would enter a
            // region whose beacon left long ago (a relay uploading what it buffered offline).
            if now - sighting.time > settings.exitTimeout {
                counters.staleSightings += 1
                return events
            }
            counters.lateSightings += 1
        }
        // Receiver names come from relays too: one inventing names cannot grow the table.
        // (The count first: the per-sighting cost is one comparison until the table is full.)
        if unconfiguredReceivers >= Self.receiverLimit, !knowsReceiver(sighting),
            !configuredReceivers.contains(sighting.receiver)
        {
            counters.receiversRefused += 1
            return events
        }
        var tagged = tracker?.asset(of: sighting)
        if tagged == nil, tracker != nil { tagged = tracker!.resolve(sighting) }
        if let asset = tagged {
            let receiver = Int(internReceiver(sighting))
            tracker!.observe(
                asset: asset, place: receiverPlace[receiver], receiver: receiverNames[receiver], rssi: sighting.rssi,
                frameRSSIAt1m: nil, at: now)
        }
        switch BeaconDecoder.decode(sighting) {
        case let .failure(e):
            // An asset's `beacon: {address}` tag need not be a beacon: its packets are used, not dropped.
            if tagged != nil { counters.assetTagSightings += 1 } else { counters.decode.count(e.reason) }
        case let .success(frame):
            counters.decode.decoded += 1
            guard let identity = frame.identity else {
                counters.framesWithoutIdentity += 1
                if tracker != nil, tracker!.telemetry(frame, from: sighting, at: now, events: &events) {
                    counters.telemetryFrames += 1
                }
                return events
            }
            observe(identity, frame: frame, sighting: sighting, events: &events)
        }
        return events
    }

    private mutating func observe(
        _ identity: BeaconIdentity, frame: BeaconFrame, sighting: Sighting, events: inout [Event]
    ) {
        let t = now
        let receiver = internReceiver(sighting)
        let slot = beaconSlot(for: identity, frame: frame, at: t)
        let paceBefore = intervals[Int(slot)].patience
        let smoothed = updateReading(slot: slot, receiver: receiver, rssi: sighting.rssi, at: t)
        let patience = intervals[Int(slot)].patience
        var paceChanged = patience != paceBefore
        if let asset = records[Int(slot)]!.asset {
            tracker!.learn(addressOf: sighting, asset: Int(asset))
            tracker!.observe(
                asset: Int(asset), place: receiverPlace[Int(receiver)], receiver: receiverNames[Int(receiver)],
                rssi: sighting.rssi, frameRSSIAt1m: frame.rssiAt1m, at: t)
        }
        guard case let .ibeacon(id) = identity else { return }
        if id.uuid == calibration?.uuid {
            calibration!.observe(
                hearer: receiverNames[Int(receiver)], major: id.major, minor: id.minor, rssi: sighting.rssi, at: t)
        }
        if records[Int(slot)]!.matchGeneration != indexGeneration {
            refreshMatches(slot: slot, id: id)
            paceChanged = true
        }
        let matches = records[Int(slot)]!.matches
        guard !matches.isEmpty else { return }
        for match in matches {
            let regionSlot = match.slot
            // Only when the beacon's pace changed (a few times in its life) or its regions did:
            // each of ~37 regions a beacon matches read at every sighting cost 5 % of the
            // engine. Raised, never lowered: the slowest of its beacons sets a region's pace.
            if paceChanged, regionPatience[Int(regionSlot)] < patience { regionPatience[Int(regionSlot)] = patience }
            if let transition = regions[Int(regionSlot)].sighted(
                at: t, heard: sighting.time, rssi: sighting.rssi, settings: settings)
            {
                if case .entered = transition {
                    let info = regionInfo[Int(regionSlot)]
                    if info.spec.notifyOnEntry {
                        events.append(
                            Event(
                                time: t,
                                payload: .regionEnter(
                                    client: info.client, region: info.spec.id, beacon: id,
                                    receiver: receiverNames[Int(receiver)],
                                    rssi: sighting.rssi,
                                    distance: distance(slot: slot, receiver: receiver, smoothed: smoothed))))
                    }
                } else {
                    appendEvent(for: transition, slot: regionSlot, to: &events)
                }
                arm(regionSlot)
            }
            if match.ranging { rangingMembers[regionSlot]!.insert(slot) }
        }
    }
}

/// Counts for `/metrics` and `beaconctl status`.
public struct EngineCounters: Sendable, Equatable {
    public var sightings = 0
    public var decode = DecodeCounters()
    /// Eddystone URL, TLM and EID frames and Ruuvi's: recognised, but they carry no beacon
    /// identity.
    public var framesWithoutIdentity = 0
    /// Of those, telemetry frames kept on an asset (SPEC §7.1).
    public var telemetryFrames = 0
    /// Sightings whose time was behind the engine's clock; processed at the engine's time.
    public var lateSightings = 0
    /// Sightings older than `exit_timeout` by the engine's clock: dropped, as history.
    public var staleSightings = 0
    /// Live sightings stamped over a second later than the daemon's clock (a relay's clock
    /// runs fast): processed at the daemon's time.
    public var clockAheadSightings = 0
    /// Sightings of assets' `beacon: {address}` tags with no beacon frame in them: used for
    /// positions, so not counted among the dropped (which would read as all of them lost).
    public var assetTagSightings = 0
    /// Beacons forgotten before their retention ran out because the table was full.
    public var beaconsEvicted = 0
    /// Sightings from a new receiver once `BeaconEngine.receiverLimit` were known: dropped.
    public var receiversRefused = 0
    public init() {}
}

/// The cold half of a monitored region: its client and its definition.
struct RegionInfo: Sendable {
    var client: String
    var spec: RegionSpec
}

/// Key of the region index: a uuid, and the major and minor when the region names them (nil:
/// any). A beacon is looked up under its uuid alone, with its major, and with both.
struct RegionIndexKey: Hashable, Sendable {
    var uuid: BeaconUUID
    var major: UInt16?
    var minor: UInt16?
}

/// One client's regions, in registration order.
struct ClientRegions: Sendable {
    var order: [String] = []
    var slots: [String: Int32] = [:]
}
