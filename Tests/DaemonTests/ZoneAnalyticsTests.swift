import BeaconCore
import Foundation
import TestSupport
import Testing

/// SPEC §8 and §10 through the daemon: the dock's visits, dwell and asset-minutes as
/// `GET /v1/zones/dock/stats` answers them agree with what the stored `zone.visit` events
/// give, and its occupancy with the stored `zone.enter`/`zone.exit` events, across a `kill -9`
/// (the visit open at it is one visit, counted whole) and a reload that removes the zone (its
/// open visit ends there).
@Suite(.serialized) struct ZoneAnalyticsTests {
    /// The shortest visit lag the configuration takes, so that visits are told within seconds.
    static let site = AssetAPITests.site + "analytics: {visit_lag: 10s, rejoin: 1s, min_visit: 1s}\n"

    /// Hears the pallet at `at` until the history has `count` zone events of `kind`.
    static func hear(
        _ d: APIDaemon, at: (x: Double, y: Double), ahead: Double = 0, until count: Int, _ kind: String
    ) throws {
        _ = try AssetAPITests.hear(d, at: at, ahead: ahead, until: "zone.\(kind) #\(count)") { events in
            events.filter { $0["type"] as? String == "beacond.zone.\(kind)" }.count >= count
        }
    }

    static func stats(_ d: APIDaemon) throws -> [String: Any] {
        let answer = try d.client.request("GET", "/v1/zones/dock/stats?from=3h&bucket=hour")
        #expect(answer.status == 200, "\(answer.body)")
        return answer.object
    }

    /// Hears the pallet at `at` until the answer's total says `key` is `count`: a visit's
    /// enter and exit reach the counting `VisitRules.settleTime` (11 s here) after their times.
    static func hear(_ d: APIDaemon, at: (x: Double, y: Double), untilTotal key: String, is count: Int) throws {
        var total: [String: Any] = [:]
        try eventually("\(key) \(count)", timeout: 30, every: 0.5, detail: { "\(total)" }) {
            try d.post(AssetAPITests.sightings(at: at))
            total = try Self.stats(d)["total"] as? [String: Any] ?? [:]
            return total[key] as? Int == count
        }
    }

    /// The dock's visits as the stored `zone.visit` events tell them: how many, and each
    /// one's dwell, ascending.
    static func fromHistory(_ d: APIDaemon) throws -> (visits: Int, dwells: [Double]) {
        let visits = try d.history(type: "zone.visit").compactMap { $0["data"] as? [String: Any] }
        let dwells = try visits.map { data in
            let entered = try #require(RFC3339.parse(data["entered"] as? String ?? ""))
            let left = try #require(RFC3339.parse(data["left"] as? String ?? ""))
            return (left - entered).seconds
        }
        return (visits.count, dwells.sorted())
    }

    /// Each hour the daemon answered, recomputed from the stored events alone (their times, as
    /// the history keeps them, to the millisecond): visits, distinct assets, dwells and
    /// asset-minutes from `zone.visit`'s `entered` and `left`, the most inside at once from
    /// `zone.enter` and `zone.exit`; the asset-minutes for every hour but the one under way
    /// (the daemon counted it up to when it answered).
    static func expectEachHourAsTheEventsGiveIt(_ buckets: [[String: Any]], events: [[String: Any]]) throws {
        var transitions: [ZoneTransition] = []
        for e in events {
            let data = e["data"] as? [String: Any] ?? [:]
            let (zone, asset) = (data["zone"] as? String ?? "", data["asset"] as? String ?? "")
            if e["type"] as? String == "beacond.zone.visit" {
                for (key, entered) in [("entered", true), ("left", false)] {
                    transitions.append(
                        ZoneTransition(
                            zone: zone, asset: asset, entered: entered,
                            time: try #require(RFC3339.parse(data[key] as? String ?? "")), visit: true))
                }
            } else {
                transitions.append(
                    ZoneTransition(
                        zone: zone, asset: asset, entered: e["type"] as? String == "beacond.zone.enter",
                        time: try #require(RFC3339.parse(e["time"] as? String ?? ""))))
            }
        }
        transitions.sort { $0.time < $1.time }
        var open: [ZoneHours.OpenVisit] = []
        for (i, bucket) in buckets.enumerated() {
            let start = try #require(RFC3339.parse(bucket["start"] as? String ?? ""))
            let end = start + .hours(1)
            let inHour = transitions.filter { $0.time >= start && $0.time < end }
            let (stats, still) = ZoneHours.compute(
                hour: start, until: end, zones: ["dock"], open: open, transitions: inHour)
            open = still
            let hour = try #require(stats.first)
            let said = "\(bucket) against \(hour)"
            #expect(bucket["visits"] as? Int == hour.visits && bucket["assets"] as? Int == hour.assets, "\(said)")
            #expect(bucket["occupancy_max"] as? Int == hour.occupancyMax, "\(said)")
            #expect(bucket["dwell_count"] as? Int == hour.dwells.count, "\(said)")
            for (key, value) in [
                ("dwell_p50_s", hour.dwellP50), ("dwell_p90_s", hour.dwellP90), ("dwell_max_s", hour.dwellMax),
            ] {
                #expect(abs((bucket[key] as? Double ?? -1) - (value ?? -1)) < 0.002, "\(key): \(said)")
            }
            if i < buckets.count - 1 {
                #expect(abs((bucket["asset_minutes"] as? Double ?? -1) - hour.assetMinutes) < 0.01, "\(said)")
            }
        }
    }

    @Test func visitsAgreeWithTheStoredZoneEventsAcrossAKillAndAReload() throws {
        let d = try APIDaemon(extra: Self.site)
        try d.start()
        // A stay of a few seconds is too short to be a visit: each lasts until it is counted.
        try Self.hear(d, at: (2, 5), until: 1, "enter")
        try Self.hear(d, at: (2, 5), untilTotal: "visits", is: 1)
        try Self.hear(d, at: (8, 5), until: 1, "exit")
        try Self.hear(d, at: (8, 5), until: 1, "visit")
        try Self.hear(d, at: (2, 5), until: 2, "enter")
        // The second visit counted begun (its enter settled and stored) before the kill.
        try Self.hear(d, at: (2, 5), untilTotal: "visits", is: 2)
        let metrics = try d.client.request("GET", "/metrics").body
        #expect(metrics.contains("beacond_zone_occupancy{zone=\"dock\"} 1\n"), "\(metrics)")
        #expect(metrics.contains("beacond_zone_visits_total{zone=\"dock\"} 2\n"), "the visits counted")
        d.crash()

        // The pallet is restored in the dock: heard there again, it is the same visit.
        try d.start()
        let positions = try d.history(type: "asset.position").count
        _ = try AssetAPITests.hear(d, at: (2, 5), until: "three positions after the start") { events in
            events.filter { $0["type"] as? String == "beacond.asset.position" }.count >= positions + 3
        }
        try Self.hear(d, at: (8, 5), until: 2, "exit")
        try Self.hear(d, at: (8, 5), until: 2, "visit")
        try Self.hear(d, at: (8, 5), untilTotal: "dwell_count", is: 2)
        let truth = try Self.fromHistory(d)
        #expect(truth.visits == 2 && truth.dwells.count == 2, "two visits, the second across the kill")
        let stats = try Self.stats(d)
        let total = try #require(stats["total"] as? [String: Any])
        #expect(total["visits"] as? Int == truth.visits)
        #expect(total["dwell_count"] as? Int == truth.dwells.count)
        #expect(abs((total["dwell_max_s"] as? Double ?? 0) - truth.dwells.last!) < 0.002, "\(total) \(truth)")
        let buckets = try #require(stats["buckets"] as? [[String: Any]])
        #expect(buckets.count >= 3 && buckets.reduce(0) { $0 + ($1["visits"] as? Int ?? 0) } == 2)
        try Self.expectEachHourAsTheEventsGiveIt(buckets, events: try d.history(type: "zone.*"))

        let csv = try runCommand(
            Executables.built("beaconctl"),
            ["--socket", d.socketPath, "report", "--since", "3h", "--zone", "dock", "--format", "csv"])
        let lines = csv.stdout.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        #expect(lines.first?.first == "ZONE" && lines.count == 2, "\(csv.stdout)\(csv.stderr)")
        #expect(lines.last?[0] == "dock" && lines.last?[2] == "2" && lines.last?[7] == "2", "\(csv.stdout)")
        // Issue 51, items 13 and 1: a time with an offset reaches the daemon whole (its `+`
        // encoded); a far-off one is refused, and the daemon answers on.
        let threeHoursAgo = RFC3339.format(.seconds(Int64(Date().timeIntervalSince1970) - 3 * 3600))
        let offset = try runCommand(
            Executables.built("beaconctl"),
            [
                "--socket", d.socketPath, "report", "--since",
                threeHoursAgo.replacingOccurrences(of: "Z", with: "+00:00"),
                "--zone", "dock", "--format", "csv",
            ])
        #expect(
            offset.status == 0 && offset.stdout.split(separator: "\n").last?.split(separator: ",")[2] == "2",
            "\(offset.stdout)\(offset.stderr)")
        let farOff = try runCommand(
            Executables.built("beaconctl"), ["--socket", d.socketPath, "report", "--since", "2300-01-01T00:00:00Z"])
        #expect(farOff.status != 0 && farOff.stderr.contains("2200-01-01"), "\(farOff.stdout)\(farOff.stderr)")
        let table = try runCommand(
            Executables.built("beaconctl"), ["--socket", d.socketPath, "report", "--by", "hour"])
        #expect(table.stdout.hasPrefix("ZONE") && table.stdout.contains("dock"), "\(table.stdout)")
        let json = try runCommand(
            Executables.built("beaconctl"), ["--socket", d.socketPath, "report", "--zone", "dock", "--format", "json"])
        let report = (try? JSONSerialization.jsonObject(with: Data(json.stdout.utf8))) as? [String: Any]
        let zones = report?["zones"] as? [[String: Any]]
        #expect(((zones?.first?["total"] as? [String: Any])?["visits"] as? Int) == 2, "\(json.stdout)")
        let refused = try runCommand(
            Executables.built("beaconctl"), ["--socket", d.socketPath, "report", "--format", "xml"])
        #expect(refused.status != 0 && refused.stderr.contains("--format"))

        // A reload that removes the dock while the pallet is on a visit: the visit ends there.
        try Self.hear(d, at: (2, 5), until: 3, "enter")
        try Self.hear(d, at: (2, 5), untilTotal: "visits", is: 3)
        try d.rewrite(
            extra: Self.site.replacingOccurrences(
                of:
                    "        zones:\n          - {id: dock, level: 0, polygon: [[0, 0], [5, 0], [5, 10], [0, 10]]}\n        alarms:\n          - {id: dock-watch, zones: [dock], on: [enter, exit]}\n",
                with: ""))
        kill(d.daemon!.process.processIdentifier, SIGHUP)
        try d.daemon!.waitUntil("the reload") { _, logs in logs.contains { $0.contains("config.reloaded") } }
        // The reload's turn commits its transitions just after it answers.
        var after: [String: Any] = [:]
        try eventually("the visit open at the reload ended there", timeout: 30, detail: { "\(after)" }) {
            after = try Self.stats(d)["total"] as? [String: Any] ?? [:]
            return after["dwell_count"] as? Int == 3
        }
        #expect(after["visits"] as? Int == 3)
        // And it is told as ended there, as the roll-ups count it.
        let told = try Self.fromHistory(d)
        #expect(told.visits == 3 && told.dwells.count == 3, "\(told)")
        #expect(try d.client.request("GET", "/v1/zones/nowhere/stats").status == 404)
        #expect(d.stop() == 0)
    }

    /// The wall clock set an hour forward while the pallet is in the dock (NTP on a gateway
    /// that booted behind), before its visit was decided: one visit, not two, told with the
    /// time it lasted (its enter moved with the clock), and counted as `zone.visit` tells it.
    @Test func aVisitAcrossAClockStepIsOneVisit() throws {
        let d = try APIDaemon(extra: Self.site)
        let offset = try WallClockStepTests.startWithAMovableClock(d)
        try Self.hear(d, at: (2, 5), until: 1, "enter")
        try "+3600\n".write(toFile: offset, atomically: true, encoding: .utf8)
        try d.daemon!.waitUntil("the step") { _, logs in logs.contains { $0.contains("clock.step") } }
        // Long enough in the dock to be a visit (a few seconds are not).
        let positions = try d.history(type: "asset.position").count
        _ = try AssetAPITests.hear(d, at: (2, 5), ahead: 3600, until: "eight positions after the step") { events in
            events.filter { $0["type"] as? String == "beacond.asset.position" }.count >= positions + 8
        }
        try Self.hear(d, at: (8, 5), ahead: 3600, until: 1, "exit")
        try Self.hear(d, at: (8, 5), ahead: 3600, until: 1, "visit")
        var total: [String: Any] = [:]
        try eventually("the visit counted", timeout: 30, every: 0.5, detail: { "\(total)" }) {
            try d.post(AssetAPITests.sightings(at: (8, 5), ahead: 3600))
            total = try Self.stats(d)["total"] as? [String: Any] ?? [:]
            return total["dwell_count"] as? Int == 1
        }
        let truth = try Self.fromHistory(d)
        #expect(truth.visits == 1 && total["visits"] as? Int == 1, "\(total)")
        #expect(truth.dwells[0] < 600, "the time it lasted, not the step: \(truth.dwells)")
        #expect(abs((total["dwell_max_s"] as? Double ?? 0) - truth.dwells[0]) < 0.002, "\(total) \(truth)")
        #expect(d.stop() == 0)
    }

    /// A state directory that cannot be opened at start (a mount not up yet) and opens later:
    /// counting starts then, from the transitions held and stored since, within a tick (30 s).
    /// Before, nothing was counted until a restart.
    @Test func aStateStoreThatOpensLateStartsTheCounting() throws {
        let d = try APIDaemon(extra: Self.site)
        let state = d.dir.appendingPathComponent("state").path
        #expect(FileManager.default.createFile(atPath: state, contents: Data("not a directory".utf8)))
        try d.start()
        _ = try AssetAPITests.hear(d, until: "the pallet placed") { _ in
            let asset = try? d.client.request("GET", "/v1/assets/pallet-9").object
            return asset?["zones"] as? [String] == ["dock"]
        }
        try FileManager.default.removeItem(atPath: state)
        try Self.hear(d, at: (2, 5), until: 1, "enter")
        var total: [String: Any] = [:]
        try eventually("the visit counted", timeout: 45, every: 1, detail: { "\(total)" }) {
            try d.post(AssetAPITests.sightings(at: (2, 5)))
            total = try Self.stats(d)["total"] as? [String: Any] ?? [:]
            return total["visits"] as? Int == 1
        }
        #expect(total["assets"] as? Int == 1)
        #expect(d.daemon!.logs.contains { $0.isLog("analytics.started", level: "info") })
        #expect(d.stop() == 0)
    }
}
