import BeaconCore

/// `GET /v1/zones/{id}/stats` (SPEC §8): one zone's figures over a span, as a whole and by
/// hour or day, every bucket of the span listed (an empty hour is a zero, so that a chart
/// has no gaps). Read back by `beaconctl report` and drawn by the floor view.
public struct ZoneStats: Sendable, Equatable {
    /// One bucket's (or the span's) figures.
    public struct Figures: Sendable, Equatable {
        public var start = ""
        public var visits = 0
        public var assets = 0
        public var occupancyMean = 0.0
        public var occupancyMax = 0
        public var assetMinutes = 0.0
        public var dwellCount = 0
        public var dwellP50Seconds: Double?
        public var dwellP90Seconds: Double?
        public var dwellMaxSeconds: Double?
        public init() {}

        public init(_ f: ZoneFigures) {
            start = RFC3339.format(f.start)
            (visits, assets, occupancyMean, occupancyMax) = (f.visits, f.assets, f.occupancyMean, f.occupancyMax)
            (assetMinutes, dwellCount) = (f.assetMinutes, f.dwellCount)
            (dwellP50Seconds, dwellP90Seconds, dwellMaxSeconds) = (f.dwellP50, f.dwellP90, f.dwellMax)
        }

        public var json: JSONValue {
            .object([
                ("start", .string(start)), ("visits", .int(visits)), ("assets", .int(assets)),
                ("occupancy_mean", .round(occupancyMean, places: 1000)), ("occupancy_max", .int(occupancyMax)),
                ("asset_minutes", .round(assetMinutes)), ("dwell_count", .int(dwellCount)),
                ("dwell_p50_s", .round(dwellP50Seconds, places: 1000)),
                ("dwell_p90_s", .round(dwellP90Seconds, places: 1000)),
                ("dwell_max_s", .round(dwellMaxSeconds, places: 1000)),
            ])
        }

        public init(json: JSONValue) {
            start = json.string("start") ?? ""
            (visits, assets, occupancyMax) = (json.int("visits"), json.int("assets"), json.int("occupancy_max"))
            occupancyMean = json.double("occupancy_mean") ?? 0
            assetMinutes = json.double("asset_minutes") ?? 0
            dwellCount = json.int("dwell_count")
            dwellP50Seconds = json.double("dwell_p50_s")
            dwellP90Seconds = json.double("dwell_p90_s")
            dwellMaxSeconds = json.double("dwell_max_s")
        }
    }

    public var zone = ""
    /// "hour" or "day".
    public var bucket = "hour"
    public var from = ""
    public var to = ""
    public var total = Figures()
    public var buckets: [Figures] = []
    public init() {}

    public var json: JSONValue {
        .object([
            ("zone", .string(zone)), ("bucket", .string(bucket)), ("from", .string(from)),
            ("to", .string(to)), ("total", total.json), ("buckets", .array(buckets.map(\.json))),
        ])
    }

    public init(json: JSONValue) {
        zone = json.string("zone") ?? ""
        bucket = json.string("bucket") ?? "hour"
        (from, to) = (json.string("from") ?? "", json.string("to") ?? "")
        if let t = json["total"] { total = Figures(json: t) }
        buckets = json.array("buckets").map(Figures.init(json:))
    }
}

/// `GET /v1/analytics/heatmap` (SPEC §8): asset-seconds per 1 m cell over a span, the cell's
/// x and y its lower-left corner in the floor's metres.
public struct HeatMapAnswer: Sendable, Equatable {
    public struct Cell: Sendable, Equatable {
        public var level = 0, x = 0, y = 0
        public var seconds = 0.0
        public init(level: Int, x: Int, y: Int, seconds: Double) {
            (self.level, self.x, self.y, self.seconds) = (level, x, y, seconds)
        }
    }

    public var from = ""
    public var to = ""
    public var level: Int?
    public var cells: [Cell] = []
    public init() {}

    public init(_ map: HeatMap, from: Timestamp, to: Timestamp, level: Int?) {
        (self.from, self.to, self.level) = (RFC3339.format(from), RFC3339.format(to), level)
        cells = map.seconds.keys.sorted().map { Cell(level: $0.level, x: $0.x, y: $0.y, seconds: map.seconds[$0]!) }
    }

    public var maxSeconds: Double { cells.map(\.seconds).max() ?? 0 }

    public var json: JSONValue {
        .object([
            ("from", .string(from)), ("to", .string(to)), ("level", level.map(JSONValue.int) ?? .null),
            ("cell_m", .int(1)), ("max_seconds", .round(maxSeconds)),
            (
                "cells",
                .array(
                    cells.map {
                        .object([
                            ("level", .int($0.level)), ("x", .int($0.x)), ("y", .int($0.y)),
                            ("seconds", .round($0.seconds)),
                        ])
                    })
            ),
        ])
    }
}
