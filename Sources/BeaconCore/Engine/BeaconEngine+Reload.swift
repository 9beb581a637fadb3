/// Applying a changed configuration in place (SIGHUP): what is unchanged keeps its state.
extension BeaconEngine {
    /// What a reload changed, for the log.
    public struct ReloadSummary: Sendable, Equatable {
        public var added = 0
        public var replaced = 0
        public var removed = 0
        public var unchanged = 0
        public var siteReplaced = false
    }

    /// Makes the configured regions `new`, given that `old` were the configured ones: regions
    /// whose definition is unchanged keep their state (no second enter), changed ones start
    /// again from unknown, and those no longer configured stop. Regions added through the
    /// API are left alone. Events (a `region.failed` over the limit) are returned.
    public mutating func reconfigureRegions(from old: [ClientSpec], to new: [ClientSpec], at t: Timestamp)
        -> (events: [Event], summary: ReloadSummary)
    {
        var events = advance(to: t)
        var summary = ReloadSummary()
        let wanted = Set(new.flatMap { c in c.regions.map { "\(c.id)\u{0}\($0.id)" } })
        for client in old {
            for region in client.regions where !wanted.contains("\(client.id)\u{0}\(region.id)") {
                if stopMonitoring(client: client.id, region: region.id) { summary.removed += 1 }
            }
        }
        for client in new {
            for region in client.regions {
                let current = clients[client.id]?.slots[region.id].map { regionInfo[Int($0)].spec }
                if current == region {
                    summary.unchanged += 1
                    continue
                }
                let change = monitor(client: client.id, region: region, at: now)
                events += change.events
                if change.failure == nil {
                    if current == nil { summary.added += 1 } else { summary.replaced += 1 }
                }
            }
        }
        return (events, summary)
    }

    /// Replaces receivers, assets, zones, alarms and positioning settings. Assets that still
    /// exist keep their readings, position and zone states (no second zone.enter) when the
    /// receivers and zones they refer to are unchanged. False when nothing changed. The visits
    /// the change ended are dropped (`reconfigureSite(_:calibrations:at:events:)` tells them).
    public mutating func reconfigureSite(
        _ site: SiteConfiguration, calibrations: [String: ReceiverCalibration], at t: Timestamp
    ) -> Bool {
        var ended: [Event] = []
        return reconfigureSite(site, calibrations: calibrations, at: t, events: &ended)
    }

    /// `reconfigureSite`, telling in `events` the visits it ended (`zone.visit`): a visit in a
    /// zone the change removed or reshaped, or of an asset it removed, ends at the reload.
    public mutating func reconfigureSite(
        _ site: SiteConfiguration, calibrations: [String: ReceiverCalibration], at t: Timestamp,
        events: inout [Event]
    ) -> Bool {
        configuredReceivers = Self.named(site, calibrations)
        if calibration?.covers(site.receivers, uuid: site.calibrationUUID) != true {
            calibration = AutoCalibration(receivers: site.receivers, uuid: site.calibrationUUID, start: t)
        }
        let old = tracker
        guard old?.definition != site || old?.calibrationTable != calibrations else { return false }
        var fresh = AssetTracker(site: site, calibrations: calibrations, lostAfter: settings.exitTimeout, start: t)
        // No site before and none now (a file of regions only): nothing was replaced.
        if old == nil && fresh.isEmpty { return false }
        fresh.recordsTransitions = recordsZoneTransitionsWhenPlaced
        if let old {
            fresh.adopt(from: old)
            fresh.endVisits(leftBy: old, at: t, events: &events)
        }
        tracker = fresh.isEmpty ? nil : fresh
        receiverPlace = receiverNames.map { tracker?.receiverIndex[$0] ?? -1 }
        nextPositionTick = tracker.map { _ in now + fresh.tickInterval }
        // Beacons re-learn which asset they are on their next sighting.
        for i in records.indices where records[i] != nil {
            records[i]!.asset = tracker?.asset(identity: records[i]!.identity).map(Int32.init)
        }
        return true
    }
}

extension BeaconEngine {
    /// Applies changed monitoring settings to the running regions: timers are re-armed from
    /// each region's own times, so a shorter `exit_timeout` exits regions whose beacons went
    /// quiet longer ago than that. A changed `enter_sightings` resizes each region's memory of
    /// its latest sightings, keeping the newest, so it counts at the region's next sighting.
    public mutating func updateMonitoring(_ new: MonitoringSettings) {
        let resize = new.enterSightings != settings.enterSightings
        settings = new
        tracker?.lostAfter = new.exitTimeout
        for client in clients.values {
            for slot in client.slots.values {
                if resize { regions[Int(slot)].resizeSightingMemory(to: new.enterSightings) }
                regions[Int(slot)].armedAt = nil
                arm(slot)
            }
        }
    }
}

extension BeaconEngine {
    /// Forgets what the receivers heard of each other (`DELETE /v1/calibration`); false when
    /// there is no calibration (fewer than two receivers).
    public mutating func resetCalibration() -> Bool {
        guard calibration != nil else { return false }
        calibration!.reset(at: now)
        return true
    }
}

extension BeaconEngine {
    /// Whether the tracker keeps each change of zone membership and each visit's enter and
    /// exit for the zone analytics (SPEC §8, §10): the daemon turns it on and takes those that
    /// have settled after every turn (`takeZoneTransitions`); left off, nothing is kept.
    public var recordsZoneTransitions: Bool {
        get { tracker?.recordsTransitions ?? recordsZoneTransitionsWhenPlaced }
        set {
            recordsZoneTransitionsWhenPlaced = newValue
            tracker?.recordsTransitions = newValue
        }
    }

    /// Where the placed assets were at each positioning tick since the last call (kept with
    /// the transitions): the daemon takes it as each hour ends.
    public mutating func takeHeatMap() -> HeatMap {
        guard let tracker, !tracker.heat.isEmpty else { return HeatMap() }
        defer { self.tracker!.heat = HeatMap() }
        return tracker.heat
    }

    /// The changes of zone membership kept since the last `takeZoneTransitions`, not yet
    /// taken, then those still held to settle: in the order of their times.
    public var pendingZoneTransitions: [ZoneTransition] { (tracker?.transitions ?? []) + (tracker?.held ?? []) }

    /// Every asset's zones now, each since its enter, and the visits told as begun, each
    /// since theirs: what the analytics must have open.
    public var zoneVisitsUnderWay: [ZoneHours.OpenVisit] {
        let live = savedState().assets.flatMap { asset in
            asset.zones.map { ZoneHours.OpenVisit(zone: $0.zone, asset: asset.asset, entered: $0.since) }
        }
        return live + (tracker?.visitsUnderWay ?? [])
    }

    /// At a start, the visits the analytics have open go on from their own enter (the saved
    /// live state only says since when the asset was inside by the edge rule), so that the
    /// visit `zone.visit` tells is the one they count.
    public mutating func resumeCountedVisits(_ open: [ZoneHours.OpenVisit]) {
        tracker?.resumeCountedVisits(open.filter(\.visit), now: now)
    }

    /// After the start's fixes are stored (`ZoneRollup.restart`, `ordered`): what the saved
    /// live state resumed begins no earlier than each zone's counting, and the visits the
    /// history told already are not resumed.
    public mutating func anchorRestoredVisits(from floors: [String: Timestamp], closed: [ZoneVisit]) {
        tracker?.anchorRestoredVisits(from: floors, closed: closed)
    }

    /// The end of a replayed trace (`beacond replay`): the visits pending — undecided seconds,
    /// visits still open — decided with the evidence there is and told, at the engine's clock.
    /// Not at a live stop: there the visits go on after the restart.
    public mutating func finishVisits() -> [Event] {
        var events: [Event] = []
        tracker?.finishVisits(at: now, events: &events)
        return events
    }

    /// At a clean stop: every held transition is let through, so that the state store has
    /// them all (a restart takes the counting up from there).
    public mutating func releaseAllZoneTransitions() {
        tracker?.releaseSettled(upTo: Timestamp(nanoseconds: .max))
    }

    /// The changes of zone membership since the last call, in order.
    public mutating func takeZoneTransitions() -> [ZoneTransition] {
        guard let tracker, !tracker.transitions.isEmpty else { return [] }
        defer { self.tracker!.transitions = [] }
        return tracker.transitions
    }
}
