/// Telemetry frames joined to assets (SPEC §7.1): by the tag's address, which an asset's
/// `beacon: {address}` names, or which the tracker learns from the asset's own identity
/// frames (an Eddystone tag sends its UID and its TLM from one address; a Ruuvi tag with an
/// iBeacon firmware, its iBeacon and its format 5).
extension AssetTracker {
    /// An address as the learned table keys it: its 48 bits, or its text when it has none.
    enum LearnedAddress: Hashable {
        case value(UInt64)
        case text(String)

        init(_ sighting: Sighting) {
            self = sighting.rare?.address.map { .text($0) } ?? .value(sighting.addressValue)
        }
    }

    /// Addresses learned at most; past it the table starts afresh (a flood of made-up
    /// addresses cannot grow it, and real tags teach theirs again with their next frame).
    static let learnedAddressLimit = 4096

    /// An identity frame of asset `a` came from the sighting's address.
    public mutating func learn(addressOf sighting: Sighting, asset a: Int) {
        learn(LearnedAddress(sighting), asset: a)
    }

    private mutating func learn(_ address: LearnedAddress, asset a: Int) {
        guard learnedAddresses[address] != a else { return }
        if learnedAddresses.count >= Self.learnedAddressLimit { learnedAddresses.removeAll(keepingCapacity: true) }
        learnedAddresses[address] = a
    }

    /// A telemetry frame (TLM, Ruuvi) from the sighting's address at `t`: kept on the asset
    /// whose tag sends from it. False when it is no asset's, or the frame is not telemetry.
    /// Its battery falling below `battery_low` raises `asset.battery_low`, once per fall: re-armed
    /// only once it has read back above the margin for `TagRules.rearmAfter`.
    @discardableResult
    public mutating func telemetry(
        _ frame: BeaconFrame, from sighting: Sighting, at t: Timestamp, events: inout [Event]
    )
        -> Bool
    {
        guard let a = asset(of: sighting) ?? learnedAddresses[LearnedAddress(sighting)] else { return false }
        return telemetry(frame, asset: a, at: t, events: &events)
    }

    private mutating func telemetry(_ frame: BeaconFrame, asset a: Int, at t: Timestamp, events: inout [Event]) -> Bool
    {
        guard states[a].telemetry.take(frame, at: t) else { return false }
        let reading = states[a].telemetry
        if !states[a].batteryLow,
            tagRules.batteryIsLow(millivolts: reading.batteryMillivolts, percent: reading.batteryPercent)
        {
            states[a].batteryLow = true
            var alert = TagAlert(asset: assets[a].id, condition: .batteryLow)
            (alert.batteryMillivolts, alert.batteryPercent) = (reading.batteryMillivolts, reading.batteryPercent)
            (alert.batteryAt, alert.temperatureC) = (reading.batteryAt, reading.temperatureC)
            events.append(Event(time: t, payload: .tag(alert)))
        } else if states[a].batteryLow,
            tagRules.batteryIsBack(millivolts: reading.batteryMillivolts, percent: reading.batteryPercent)
        {
            let since = states[a].batteryBackSince ?? t
            states[a].batteryBackSince = since
            if t - since >= TagRules.rearmAfter { (states[a].batteryLow, states[a].batteryBackSince) = (false, nil) }
        } else if states[a].batteryLow {
            states[a].batteryBackSince = nil  // under the re-arm level again: the wait starts over
        }
        return true
    }

    /// How long asset `a` may be silent before it is missing.
    func missingAfter(_ a: Int) -> TimeSpan { assets[a].missingAfter ?? tagRules.missingAfter }

    /// Heard once and silent for its `missing_after` by `t`: `asset.missing`, at the time it
    /// became so, with where it was last placed.
    mutating func checkMissing(_ a: Int, at t: Timestamp, events: inout [Event]) {
        guard states[a].missingSince == nil, let heard = states[a].lastHeard else { return }
        let due = max(heard + missingAfter(a), states[a].missingNotBefore ?? heard)
        guard t >= due else { return }
        (states[a].missingSince, states[a].missingLastSeen, states[a].heardAgainAt) = (due, heard, nil)
        var alert = TagAlert(asset: assets[a].id, condition: .missing)
        (alert.lastSeen, alert.position, alert.positionAt) = (heard, states[a].estimate, states[a].estimatedAt)
        events.append(Event(time: due, payload: .tag(alert)))
    }

    /// A missing asset heard again: `asset.found` at this tick, with how long it was not
    /// heard and the position this tick made (nil when it could not place it yet).
    mutating func tellFound(_ a: Int, at t: Timestamp, events: inout [Event]) {
        guard states[a].missingSince != nil, let again = states[a].heardAgainAt, let last = states[a].missingLastSeen
        else { return }
        (states[a].missingSince, states[a].missingLastSeen, states[a].heardAgainAt) = (nil, nil, nil)
        var alert = TagAlert(asset: assets[a].id, condition: .found)
        alert.missingFor = again - last
        alert.position = states[a].estimatedAt == t ? states[a].estimate : nil
        events.append(Event(time: t, payload: .tag(alert)))
    }

    /// What asset `id`'s tag last said of itself; nil for an asset the site does not have.
    public func telemetry(asset id: String) -> TagTelemetry? {
        assetIndex[id].map { states[$0].telemetry }
    }
}

/// An asset's tag as `GET /v1/tags` shows it (SPEC §7.2): what it said of itself, its pace,
/// when it was last heard and where it was last placed (kept once it falls silent).
public struct TagState: Sendable, Equatable {
    public var asset: String
    public var telemetry: TagTelemetry
    /// The learned advertising interval; nil until its second packet.
    public var interval: TimeSpan?
    public var lastSeen: Timestamp?
    public var lastPosition: AssetFix?
    /// When `lastPosition` was made.
    public var positionAt: Timestamp?
    /// As the engine decided it: told `asset.missing` and not heard since.
    public var missing: Bool
    /// As the engine decided it: told `asset.battery_low` and not re-armed since.
    public var batteryLow: Bool
}

extension AssetTracker {
    /// Every asset's tag, in configuration order.
    public var tagStates: [TagState] {
        assets.indices.map { a in
            TagState(
                asset: assets[a].id, telemetry: states[a].telemetry, interval: states[a].interval.interval,
                lastSeen: states[a].lastHeard, lastPosition: states[a].estimate, positionAt: states[a].estimatedAt,
                missing: states[a].missingSince != nil, batteryLow: states[a].batteryLow)
        }
    }
}
