/// A zone's figures over one hour, one day, or a report's whole span (SPEC §8), as they are
/// stored and answered: `ZoneBucketStats` without the list of every visit's dwell, which is
/// kept as exact p50, p90 and max and as `DwellBins` for spans made of several.
public struct ZoneFigures: Sendable, Equatable {
    public var zone: String
    public var start: Timestamp
    public var length: TimeSpan
    public var visits: Int
    /// Distinct assets inside at some moment; over a span made of several buckets, the most
    /// any one bucket had (an asset in the zone on two days is one asset each day).
    public var assets: Int
    /// By the live membership (SPEC §10): `occupancySeconds` over the span's seconds.
    public var occupancyMean: Double
    public var occupancyMax: Int
    public var occupancySeconds: Double
    /// Time on visits, all assets together.
    public var assetSeconds: Double
    /// Visits that ended within the span (`bins` holds them), and how long they lasted.
    public var dwellCount: Int { bins.total }
    public var dwellP50: Double?
    public var dwellP90: Double?
    public var dwellMax: Double?
    public var bins: DwellBins

    public init(
        zone: String, start: Timestamp, length: TimeSpan, visits: Int, assets: Int, occupancyMean: Double,
        occupancyMax: Int, occupancySeconds: Double, assetSeconds: Double, dwellP50: Double?, dwellP90: Double?,
        dwellMax: Double?, bins: DwellBins
    ) {
        (self.zone, self.start, self.length, self.visits, self.assets) = (zone, start, length, visits, assets)
        (self.occupancyMean, self.occupancyMax, self.occupancySeconds) = (occupancyMean, occupancyMax, occupancySeconds)
        self.assetSeconds = assetSeconds
        (self.dwellP50, self.dwellP90, self.dwellMax, self.bins) = (dwellP50, dwellP90, dwellMax, bins)
    }

    /// An hour's or a day's figures (`length`: how long the bucket is, though the last may
    /// be under way: its occupancy is over the time so far).
    public init(_ stats: ZoneBucketStats, length: TimeSpan) {
        self.init(
            zone: stats.zone, start: stats.hour, length: length, visits: stats.visits, assets: stats.assets,
            occupancyMean: stats.occupancyMean, occupancyMax: stats.occupancyMax,
            occupancySeconds: stats.occupancySeconds, assetSeconds: stats.assetSeconds, dwellP50: stats.dwellP50,
            dwellP90: stats.dwellP90, dwellMax: stats.dwellMax, bins: DwellBins(stats.dwells))
    }

    public var assetMinutes: Double { assetSeconds / 60 }

    /// One zone's buckets as one span from `start` for `length`: visits and asset-time add
    /// up, occupancy is over the whole span (an hour nobody was in counts as empty), the
    /// dwell percentiles come from the buckets' bins (within 1 %), exact when there is one.
    public static func span(_ rows: [ZoneFigures], zone: String, start: Timestamp, length: TimeSpan) -> ZoneFigures {
        if rows.count == 1, var only = rows.first {
            (only.start, only.length) = (start, length)
            only.occupancyMean = length.seconds > 0 ? only.occupancySeconds / length.seconds : 0
            return only
        }
        var bins = DwellBins()
        for row in rows { bins.merge(row.bins) }
        let assetSeconds = rows.reduce(0) { $0 + $1.assetSeconds }
        let occupancySeconds = rows.reduce(0) { $0 + $1.occupancySeconds }
        return ZoneFigures(
            zone: zone, start: start, length: length, visits: rows.reduce(0) { $0 + $1.visits },
            assets: rows.map(\.assets).max() ?? 0,
            occupancyMean: length.seconds > 0 ? occupancySeconds / length.seconds : 0,
            occupancyMax: rows.map(\.occupancyMax).max() ?? 0, occupancySeconds: occupancySeconds,
            assetSeconds: assetSeconds,
            dwellP50: bins.percentile(0.5), dwellP90: bins.percentile(0.9), dwellMax: bins.max, bins: bins)
    }
}
