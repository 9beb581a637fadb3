import APIModel
import ArgumentParser
import BeaconCore

/// `beaconctl report` (SPEC §8): how busy each zone was and how long things stayed, over a
/// span back from now — the store manager's morning question — as a table, CSV for a
/// spreadsheet, or the daemon's JSON.
struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Zone visits, occupancy and dwell over a span (by zone, or by hour or day).")
    @OptionGroup var common: Common
    @Option(help: "How far back: a span such as 24h, 7d, 90d, or an RFC 3339 time.") var since = "24h"
    @Option(help: "Only this zone.") var zone: String?
    @Option(help: "One row per hour or day instead of one per zone (hour or day).") var by: String?
    @Option(help: "table, csv or json.") var format = "table"

    func validate() throws {
        guard ["table", "csv", "json"].contains(format) else {
            throw ValidationError("--format: expected table, csv or json, got \"\(format)\"")
        }
        if let by, by != "hour" && by != "day" { throw ValidationError("--by: expected hour or day, got \"\(by)\"") }
    }

    func run() throws {
        try common.run { client throws(APIClient.Failure) in
            var zones = zone.map { [$0] } ?? []
            if zone == nil { zones = try client.get("/v1/zones").array("zones").compactMap { $0.string("id") } }
            var reports: [ZoneStats] = []
            for id in zones {
                var path = "/v1/zones/\(percentEncode(id))/stats?from=\(percentEncode(since))"
                if let by { path += "&bucket=\(by)" }
                reports.append(ZoneStats(json: try client.get(path)))
            }
            if common.json || format == "json" {
                writeOut(
                    JSONValue.object([("since", .string(since)), ("zones", .array(reports.map(\.json)))]).serialized)
                return
            }
            let rows = Self.rows(reports, byBucket: by != nil)
            writeOut(format == "csv" ? Self.csv(rows) : Self.table(rows))
        }
    }

    static let headers = [
        "ZONE", "START", "VISITS", "ASSETS", "OCC_MEAN", "OCC_MAX", "ASSET_MIN", "DWELLS", "DWELL_P50_S", "DWELL_P90_S",
        "DWELL_MAX_S",
    ]

    /// One row per zone (its total), or per zone and bucket.
    static func rows(_ reports: [ZoneStats], byBucket: Bool) -> [[String]] {
        reports.flatMap { report in
            (byBucket ? report.buckets : [report.total]).map { f in
                [
                    report.zone, f.start, "\(f.visits)", "\(f.assets)", cell(f.occupancyMean), "\(f.occupancyMax)",
                    cell(f.assetMinutes), "\(f.dwellCount)", cell(f.dwellP50Seconds), cell(f.dwellP90Seconds),
                    cell(f.dwellMaxSeconds),
                ]
            }
        }
    }

    static func table(_ rows: [[String]]) -> String {
        var t = Table()
        t.headers = headers
        for row in rows { t.add(row) }
        return t.text
    }

    /// RFC 4180: a field with a comma, a quote or a line break is quoted, quotes doubled.
    static func csv(_ rows: [[String]]) -> String {
        func field(_ s: String) -> String {
            guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
            return "\"" + String(s.flatMap { $0 == "\"" ? ["\"", "\""] : [$0] }) + "\""
        }
        return ([headers] + rows.map { $0.map { $0 == "-" ? "" : $0 } }).map { $0.map(field).joined(separator: ",") }
            .joined(separator: "\n")
    }
}
