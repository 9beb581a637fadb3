/// One asset entering or leaving one zone, whatever alarms watch it: what the zone analytics
/// (SPEC §8) count. An alarm's `zone.enter` and `zone.exit` are made from the same change of
/// membership, so the two agree where an alarm watches the zone on enter and exit; a zone no
/// alarm watches is counted all the same — a store asks how busy its aisles are without
/// wanting an alert at every cart.
public struct ZoneTransition: Sendable, Equatable {
    public var zone: String
    public var asset: String
    public var entered: Bool
    public var time: Timestamp

    public init(zone: String, asset: String, entered: Bool, time: Timestamp) {
        (self.zone, self.asset, self.entered, self.time) = (zone, asset, entered, time)
    }
}
