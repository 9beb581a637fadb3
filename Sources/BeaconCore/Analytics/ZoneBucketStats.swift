/// One zone's bucket — an hour, a day, or the part of either under way (SPEC §8) — as it is
/// counted: how busy it was and how long things stayed, with every dwell that ended in it.
/// `ZoneFigures` is the same as it is stored (the dwells as percentiles and bins). Buckets
/// start on UTC hours and days, `hour` their start.
public struct ZoneBucketStats: Sendable, Equatable {
    public var zone: String
    public var hour: Timestamp
    /// Visits that began within the hour (`zone.visit`'s `entered`).
    public var visits = 0
    /// Distinct assets on a visit at any moment of the hour (those already on one at its
    /// start too).
    public var assets = 0
    /// The time-weighted number of assets inside by the live membership: `occupancySeconds`
    /// over the hour's seconds (over the seconds so far, for the hour under way).
    public var occupancyMean = 0.0
    /// The most assets inside at once by the live membership.
    public var occupancyMax = 0
    /// Time spent inside within the hour by the live membership, by all assets together.
    public var occupancySeconds = 0.0
    /// Time spent on visits within the hour, by all assets together.
    public var assetSeconds = 0.0
    /// How long each visit that ended within the hour lasted (its whole length, from its
    /// enter, perhaps hours before), in seconds, ascending.
    public var dwells: [Double] = []

    public init(zone: String, hour: Timestamp) {
        self.zone = zone
        self.hour = hour
    }

    public var assetMinutes: Double { assetSeconds / 60 }
    public var dwellP50: Double? { Self.percentile(dwells, 0.5) }
    public var dwellP90: Double? { Self.percentile(dwells, 0.9) }
    public var dwellMax: Double? { dwells.last }

    /// The nearest-rank percentile of ascending `values`: the smallest value with at least
    /// `q` of them at or below it (a value that occurred, never an interpolation).
    public static func percentile(_ values: [Double], _ q: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let rank = Int((q * Double(values.count)).rounded(.up))
        return values[min(values.count, max(1, rank)) - 1]
    }

    /// The hour that `t` falls in.
    public static func hour(of t: Timestamp) -> Timestamp {
        let ns = Int64(3_600_000_000_000)
        let q = t.nanoseconds / ns
        return Timestamp(nanoseconds: (t.nanoseconds % ns < 0 ? q - 1 : q) * ns)
    }
}
