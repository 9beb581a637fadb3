import APIModel
import BeaconConfig
import BeaconCore
import HTTPServer
import Storage

/// The zone analytics (SPEC §8): a zone's figures by hour or day, and the heat map.
extension APIRouter {
    /// Buckets an answer may list: 90 days by day, a month by hour.
    static let maxBuckets = 800

    /// `GET /v1/zones/{id}/stats?from=&to=&bucket=hour|day`: `from` and `to` RFC 3339 times or
    /// spans back from now (`24h`, `7d`); by default the last 24 hours, by hour (by day when
    /// the span is longer than two days). The span is widened to whole buckets. A zone no
    /// longer configured answers for the span it has figures in.
    func zoneStats(id: String, _ query: [String: String]) -> HTTPReply {
        let span: (from: Timestamp, to: Timestamp)
        switch analyticsSpan(query, defaultBack: .hours(24)) {
        case let .success(s): span = s
        case let .failure(reply): return reply.reply
        }
        let bucket: TimeSpan
        switch query["bucket"] {
        case nil: bucket = span.to - span.from > .hours(48) ? ZoneRollup.dayLength : ZoneRollup.hour
        case "hour": bucket = ZoneRollup.hour
        case "day": bucket = ZoneRollup.dayLength
        case let other?:
            return Reply.error(400, "bad_bucket", "bucket: expected hour or day, got \"\(other.prefix(40))\"")
        }
        let from = bucket == ZoneRollup.hour ? ZoneBucketStats.hour(of: span.from) : ZoneRollup.day(of: span.from)
        let count = Int(((span.to - from).seconds / bucket.seconds).rounded(.up))
        guard count <= Self.maxBuckets else {
            return Reply.error(
                400, "too_many_buckets",
                "\(count) \(bucket == ZoneRollup.hour ? "hours" : "days") asked; at most \(Self.maxBuckets): a shorter span or bucket=day"
            )
        }
        guard let store = context.store else {
            return Reply.error(503, "no_state_store", "the state store is unavailable, so there are no analytics")
        }
        let to = from + TimeSpan(nanoseconds: bucket.nanoseconds * Int64(max(count, 1)))
        do {
            let rows = try store.zoneBuckets(zone: id, span: bucket, from: from, to: to, now: context.clock())
            // A zone taken out of the file still has its past.
            guard context.config.zones.contains(where: { $0.id == id }) || !rows.isEmpty else {
                return Reply.error(
                    404, "no_such_zone", "no zone \"\(id.prefix(80))\" in the configuration or its analytics")
            }
            return Reply.json(Self.zoneStats(id, rows, from: from, to: to, bucket: bucket).json)
        } catch {
            return Reply.error(500, "store_unreadable", "\(error)")
        }
    }

    /// Every bucket of [from, to), empty ones as zeros, and the span as a whole.
    static func zoneStats(_ id: String, _ rows: [ZoneFigures], from: Timestamp, to: Timestamp, bucket: TimeSpan)
        -> ZoneStats
    {
        var stats = ZoneStats()
        (stats.zone, stats.bucket) = (id, bucket == ZoneRollup.hour ? "hour" : "day")
        (stats.from, stats.to) = (RFC3339.format(from), RFC3339.format(to))
        let byStart = Dictionary(rows.map { ($0.start, $0) }, uniquingKeysWith: { a, _ in a })
        var start = from
        while start < to {
            var figures = ZoneStats.Figures()
            if let row = byStart[start] {
                figures = ZoneStats.Figures(row)
            } else {
                figures.start = RFC3339.format(start)
            }
            stats.buckets.append(figures)
            start = start + bucket
        }
        stats.total = ZoneStats.Figures(ZoneFigures.span(rows, zone: id, start: from, length: to - from))
        return stats
    }

    /// `GET /v1/analytics/heatmap?from=&to=&level=`: asset-seconds per 1 m cell over the
    /// hours that begin in the span (by default the last 24 hours), of one level or all.
    func heatmap(_ query: [String: String]) -> HTTPReply {
        let span: (from: Timestamp, to: Timestamp)
        switch analyticsSpan(query, defaultBack: .hours(24)) {
        case let .success(s): span = s
        case let .failure(reply): return reply.reply
        }
        var level: Int?
        if let text = query["level"] {
            guard let n = Int(text), abs(n) < 1000 else {
                return Reply.error(400, "bad_level", "level: expected an integer, got \"\(text.prefix(40))\"")
            }
            level = n
        }
        guard let store = context.store else {
            return Reply.error(503, "no_state_store", "the state store is unavailable, so there are no analytics")
        }
        do {
            let from = ZoneBucketStats.hour(of: span.from)
            let map = try store.heat(level: level, from: from, to: span.to)
            return Reply.json(HeatMapAnswer(map, from: from, to: span.to, level: level).json)
        } catch {
            return Reply.error(500, "store_unreadable", "\(error)")
        }
    }

    struct RefusedQuery: Error {
        let reply: HTTPReply
    }

    /// `from` and `to`: RFC 3339 times or spans back from now; `from` before `to`.
    func analyticsSpan(_ query: [String: String], defaultBack: TimeSpan) -> Result<
        (from: Timestamp, to: Timestamp), RefusedQuery
    > {
        let now = context.clock()
        var bounds: [String: Timestamp] = ["from": now - defaultBack, "to": now]
        for key in ["from", "to"] {
            guard let text = query[key] else { continue }
            guard let t = Self.since(text, now: now) else {
                return .failure(
                    RefusedQuery(
                        reply: Reply.error(
                            400, "bad_\(key)",
                            "\(key): expected an RFC 3339 time (2026-11-26T08:00:00Z) or a span back from now (24h, 7d), "
                                + "\(RFC3339.supportedText), got \"\(text.prefix(40))\""
                        )))
            }
            bounds[key] = t
        }
        guard bounds["from"]! < bounds["to"]! else {
            return .failure(RefusedQuery(reply: Reply.error(400, "bad_span", "from must be before to")))
        }
        return .success((bounds["from"]!, bounds["to"]!))
    }
}
