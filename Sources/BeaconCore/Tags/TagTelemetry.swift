/// What an asset's tag says of itself (SPEC §7.1–7.2): its battery, its temperature and
/// whether it moves, from the telemetry frames it interleaves with its identity frames
/// (Eddystone-TLM, Ruuvi data format 5). A store asks which battery is dying and which tag
/// is still; the position alone answers neither.
public struct TagTelemetry: Sendable, Equatable {
    public var batteryMillivolts: Int?
    /// Where the frame gives one; neither TLM nor Ruuvi format 5 does.
    public var batteryPercent: Int?
    /// When the battery was last read.
    public var batteryAt: Timestamp?
    public var temperatureC: Double?
    /// Ruuvi's movement counter, and when it last changed.
    public var movementCounter: Int?
    public var movedAt: Timestamp?

    /// A movement counter that changed within this long says the tag moves.
    public static let movingWithin = TimeSpan.minutes(1)

    public init() {}

    /// The battery in percent: the frame's own where it gives one, else estimated from the
    /// voltage of a lithium coin cell — 3.0 V full, 2.5 V (the default `battery_low`) at 20 %,
    /// 2.0 V empty, linear between — so that a dashboard's usual low level (20 %) falls where
    /// beacond's does. nil with no reading.
    public var batteryPercentShown: Int? {
        if let batteryPercent { return batteryPercent }
        guard let mv = batteryMillivolts else { return nil }
        let percent = mv >= 2500 ? 20 + Double(mv - 2500) * 80 / 500 : Double(mv - 2000) * 20 / 500
        return Int(max(0, min(100, percent)).rounded())
    }

    /// Moving when its movement counter changed within the last minute; nil for a tag that
    /// keeps no counter.
    public func moving(at t: Timestamp) -> Bool? {
        guard movementCounter != nil else { return nil }
        return movedAt.map { t - $0 <= Self.movingWithin } ?? false
    }

    /// Takes what a telemetry frame says, at `t`. False for a frame that is not telemetry.
    @discardableResult
    public mutating func take(_ frame: BeaconFrame, at t: Timestamp) -> Bool {
        switch frame {
        case let .eddystoneTLM(tlm):
            guard !tlm.encrypted else { return false }
            // TLM's 0 mV is "not supported": kept as no reading, not as a flat battery.
            if let mv = tlm.batteryMillivolts, mv > 0 { (batteryMillivolts, batteryAt) = (mv, t) }
            if let c = tlm.temperatureC { temperatureC = c }
            return true
        case let .ruuvi(ruuvi):
            if let mv = ruuvi.batteryMillivolts { (batteryMillivolts, batteryAt) = (mv, t) }
            if let c = ruuvi.temperatureC { temperatureC = c }
            if let count = ruuvi.movementCounter {
                if let previous = movementCounter, previous != count { movedAt = t }
                movementCounter = count
            }
            return true
        default:
            return false
        }
    }
}
