/// One asset entering or leaving one zone, whatever alarms watch it: what the zone analytics
/// (SPEC §8) count. Two kinds, counted apart (SPEC §10): the live membership's changes, which
/// an alarm's `zone.enter` and `zone.exit` are made from, give the occupancy; a visit's
/// beginning and end (`visit`), as the visit smoother decided them and `zone.visit` tells
/// them, give the visits, the dwell and the asset-minutes — the live edge splits a stay at
/// the zone's edge into pieces a report cannot count on. A zone no alarm watches is counted
/// all the same: a store asks how busy its aisles are without wanting an alert at every cart.
public struct ZoneTransition: Sendable, Equatable {
    public var zone: String
    public var asset: String
    public var entered: Bool
    public var time: Timestamp
    /// A visit's enter or exit (`zone.visit`'s `entered` and `left`), not the live membership's.
    public var visit: Bool

    public init(zone: String, asset: String, entered: Bool, time: Timestamp, visit: Bool = false) {
        (self.zone, self.asset, self.entered, self.time, self.visit) = (zone, asset, entered, time, visit)
    }
}
