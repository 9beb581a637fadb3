import BeaconCore
import Foundation
import TestSupport
import Testing

/// SPEC §6.3, "a hand-over neither repeats nor re-decides": a store of three gateways on a
/// real mosquitto, the simulated store's tags walking through its zones, the locator
/// `kill -9`ed while alerts flow. A consumer that de-duplicates by CloudEvents `id` must
/// count every alert exactly once: none delivered twice under two ids, none lost. The tags'
/// own alerts (SPEC §7.4) too: a battery that falls under `battery_low` before the kill is
/// told once, by the first locator, and a tag switched off is told missing once, by the next.
/// Each engine runs its assets on three threads (`engine.threads`).
@Suite(.serialized) struct SiteHandOverTests {
    /// config/sim-site.yaml on a test broker, its zone alerts to `receiver`; logged in as
    /// `login` (user and password file) on a locked-down broker.
    static func config(
        _ broker: PrivateBroker, receiver: WebhookReceiver, priority: Int, login: (String, String)? = nil
    ) throws -> String {
        let text = try String(
            contentsOf: Executables.packageRoot.appendingPathComponent("config/sim-site.yaml"), encoding: .utf8)
        // The gateway block is the test daemon's own (APIDaemon's header).
        let body = text.split(separator: "\n", omittingEmptySubsequences: false).drop { !$0.hasPrefix("site:") }
            .joined(separator: "\n")
        return
            body
            .replacingOccurrences(
                of: "url: \"mqtt://127.0.0.1:1883\"",
                with: "url: \"\(broker.url)\""
                    + (login.map { ", username: \($0.0), password_file: \($0.1)" } ?? "")
            )
            .replacingOccurrences(of: "locator_priority: 100", with: "locator_priority: \(priority)")
            .replacingOccurrences(of: "monitoring:\n  exit_timeout: 30s\n", with: "")
            // tag-22's battery under 2500 mV after 10 s, tag-23 switched off after 5 s.
            .replacingOccurrences(of: "battery: {millivolts: 2530,", with: "battery: {millivolts: 2510,")
            .replacingOccurrences(of: "off_after: 30s", with: "off_after: 5s")
            + "\nwebhooks:\n  - {id: crm, url: \"\(receiver.url)\", events: [\"zone.*\", \"asset.battery_low\", "
            + "\"asset.missing\", \"asset.found\"], batch: {max_events: 5, max_delay: 0s}}\n"
            // Each gateway's engine on three threads, more than CI's cores (issue 64)
            + "engine: {threads: 3}\n"
    }

    /// The simulated store's gateways `ids` (with their locator priorities), each logged in as
    /// its own user of `broker` (`SiteTests.passwords`) unless `open`, started simulating, their
    /// zone alerts to `receiver`.
    static func startGateways(
        _ ids: [(String, Int)], on broker: PrivateBroker, receiver: WebhookReceiver, open: Bool = false
    ) throws -> [APIDaemon] {
        let gateways = try ids.map { id, priority in
            let dir = try Executables.temporaryDirectory()
            let secret = dir.appendingPathComponent("mqtt.secret")
            try SiteTests.passwords[id]!.write(to: secret, atomically: true, encoding: .utf8)
            return try APIDaemon(
                extra: Self.config(
                    broker, receiver: receiver, priority: priority, login: open ? nil : (id, secret.path)),
                monitoring: "exit_timeout: 30s", dir: dir, gatewayID: id)
        }
        for g in gateways { try g.start(arguments: ["--simulate", "--no-print-events"]) }
        return gateways
    }

    /// An alert as a consumer tells alerts apart by content: type, asset, zone.
    struct Alert: Hashable {
        var type: String, subject: String, zone: String
        init?(_ event: [String: Any]) {
            guard let type = event["type"] as? String, let subject = event["subject"] as? String,
                let zone = (event["data"] as? [String: Any])?["zone"] as? String
            else { return nil }
            (self.type, self.subject, self.zone) = (type, subject, zone)
        }
    }

    /// Pairs of delivered events with different ids that are one alert: of one asset in one
    /// zone, two of the same type in a row (an enter after an enter, with no exit between),
    /// within 30 s. What a consumer de-duplicating by id would count twice.
    static func repeats(_ events: [[String: Any]]) -> [(String, String)] {
        var byPlace: [String: [(Double, Alert, String)]] = [:]
        for e in events {
            guard let alert = Alert(e), let time = SiteTests.seconds(e["time"] as? String ?? ""),
                let id = e["id"] as? String
            else { continue }
            let sender = e["sender"] as? String ?? "?"
            let said = "\(id) \(alert.type) \(alert.subject) \(alert.zone) at \(time) from \(sender)"
            byPlace[alert.subject + " " + alert.zone, default: []].append((time, alert, said))
        }
        var found: [(String, String)] = []
        for list in byPlace.values {
            let sorted = list.sorted { $0.0 < $1.0 }
            for (a, b) in zip(sorted, sorted.dropFirst()) where a.1 == b.1 && b.0 - a.0 < 30 {
                found.append((a.2, b.2))
            }
        }
        return found
    }

    /// The zone alerts in a gateway's state file (it may have been killed), as CloudEvents.
    static func storedAlerts(_ d: APIDaemon) throws -> [[String: Any]] {
        let file = d.dir.appendingPathComponent("state/beacond.sqlite").path
        let read = try runCommand(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [
                "-c",
                "import sqlite3,sys; [print(r[0]) for r in sqlite3.connect(sys.argv[1]).execute(\"SELECT body FROM event WHERE type LIKE 'beacond.zone.%' ORDER BY seq\")]",
                file,
            ])
        guard read.status == 0 else { throw TestFailure("reading \(file): \(read.stderr)") }
        return read.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    static func rfc3339(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: date)
    }

    /// The gateway that sent each accepted request (`X-Beacond-Gateway`), in order.
    static func senders(_ receiver: WebhookReceiver) -> [String] {
        receiver.requests.compactMap { request in
            if let header = (request["headers"] as? [String: Any])?["x-beacond-gateway"] as? String { return header }
            // A build from before the header: its events' source named the gateway.
            let source = (request["events"] as? [[String: Any]])?.first?["source"] as? String
            return source.map { String($0.dropFirst("beacond://".count)) }
        }
    }

    /// The zone analytics (SPEC §8, §10) on the locator that took over: each visit its engine
    /// told is counted once across the hand-over, as its own stored `zone.visit` events give
    /// them. A visit's end reaches the counting `settleTime` (45 s) after it ended, and the
    /// tags keep walking: every visit that ended 2 s before that is counted, and none that the
    /// history does not have.
    static func expectVisitsCountedOnce(_ d: APIDaemon) throws {
        let zones = ["entrance", "checkout", "aisle-3", "stockroom"]
        let settle = VisitRules().settleTime.seconds
        func visits(endedBefore limit: Date) throws -> [String: Int] {
            var counts: [String: Int] = [:]
            for e in try d.history(type: "zone.visit") {
                let data = e["data"] as? [String: Any] ?? [:]
                guard let left = RFC3339.parse(data["left"] as? String ?? ""),
                    Double(left.nanoseconds) / 1e9 < limit.timeIntervalSince1970
                else { continue }
                counts[data["zone"] as? String ?? "", default: 0] += 1
            }
            return counts
        }
        try eventually("a visit ended long enough ago to be counted", timeout: 90, every: 1) {
            try visits(endedBefore: Date().addingTimeInterval(-settle - 2)).values.reduce(0, +) > 0
        }
        let sure = try visits(endedBefore: Date().addingTimeInterval(-settle - 2))
        var counted: [String: Int] = [:]
        for zone in zones {
            let total = try d.client.request("GET", "/v1/zones/\(zone)/stats?from=1h").object["total"]
            counted[zone] = (total as? [String: Any])?["dwell_count"] as? Int ?? -1
        }
        let told = try visits(endedBefore: Date.distantFuture)
        #expect(
            zones.allSatisfy { sure[$0, default: 0] <= counted[$0]! && counted[$0]! <= told[$0, default: 0] },
            "counted \(counted), told \(sure) … \(told)")
    }

    @Test func theLocatorKilledMidAlertsRepeatsNoneAndLosesNone() throws {
        // BEACOND_HANDOVER_RUNS=10 for the figure in BENCHMARKS.md; one run in the suite.
        let runs = Int(ProcessInfo.processInfo.environment["BEACOND_HANDOVER_RUNS"] ?? "") ?? 1
        for run in 1...runs {
            let (alerts, repeats, lost) = try handOver()
            print("hand-over run \(run): \(alerts) alerts delivered, \(repeats) repeated, \(lost) lost")
            #expect(repeats == 0)
            #expect(lost == 0)
        }
    }

    /// One run: the counts of distinct alerts delivered, of alerts repeated under a second id,
    /// and of the site's alerts (gw1's until the kill, gw2's after) never delivered.
    func handOver() throws -> (Int, Int, Int) {
        // The broker as docs/sites.md locks it down (the shipped configuration and ACL).
        // BEACOND_HANDOVER_OPEN_BROKER=1: an open broker, as before the lock-down (to measure a
        // build from before the hand-over by decisions, which the ACL would refuse).
        let open = ProcessInfo.processInfo.environment["BEACOND_HANDOVER_OPEN_BROKER"] == "1"
        let broker = try open ? PrivateBroker() : PrivateBroker(users: SiteTests.passwords, lockedDown: true)
        let receiver = try WebhookReceiver()
        let gateways = try Self.startGateways(
            [("gw1", 100), ("gw2", 50), ("gw3", 10)], on: broker, receiver: receiver, open: open)
        let (gw1, gw2, gw3) = (gateways[0], gateways[1], gateways[2])
        try receiver.waitUntil("gw1's alerts, tag-22's battery among them", timeout: 60) { _ in
            receiver.delivered.count >= 8 && Self.senders(receiver).allSatisfy { $0 == "gw1" }
                && receiver.delivered.contains { $0["type"] as? String == "beacond.asset.battery_low" }
        }
        gw1.crash()
        let killed = Date()
        try receiver.waitUntil("gw2's alerts", timeout: 60) { _ in
            Self.senders(receiver).filter { $0 == "gw2" }.count >= 3 && Date().timeIntervalSince(killed) > 15
        }
        #expect(!Self.senders(receiver).contains("gw3"))
        // tag-23, silent since 5 s after the start, is missing a minute later: told by gw2.
        try receiver.waitUntil("tag-23 missing", timeout: 90) { _ in
            receiver.delivered.contains { $0["type"] as? String == "beacond.asset.missing" }
        }
        // What the site decided reaches the consumer: every alert gw1 made (read from its state
        // file after the kill), and every one gw2 made once it had taken over.
        let made =
            try Self.storedAlerts(gw1)
            + (try gw2.history()).filter {
                ($0["type"] as? String ?? "").hasPrefix("beacond.zone.")
                    && (SiteTests.seconds($0["time"] as? String ?? "") ?? 0)
                        > SiteTests.seconds(Self.rfc3339(killed.addingTimeInterval(2)))!
            }
        var lost: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(20)
        repeat {
            let got = receiver.delivered
            lost = made.filter { m in
                guard let alert = Alert(m), let t = SiteTests.seconds(m["time"] as? String ?? "") else { return false }
                let delivered = got.contains { d in
                    Alert(d) == alert && abs((SiteTests.seconds(d["time"] as? String ?? "") ?? 0) - t) < 10
                }
                // Not lost either: an alert that repeats what the consumer was last told of that
                // asset in that zone (a new locator does not deliver it, docs/sites.md).
                let told = got.filter { d in
                    guard let a = Alert(d) else { return false }
                    return a.subject == alert.subject && a.zone == alert.zone
                        && (SiteTests.seconds(d["time"] as? String ?? "") ?? .infinity) <= t
                }.max {
                    (SiteTests.seconds($0["time"] as? String ?? "") ?? 0)
                        < (SiteTests.seconds($1["time"] as? String ?? "") ?? 0)
                }
                return !delivered && told.flatMap(Alert.init)?.type != alert.type
            }
            if lost.isEmpty { break }
            usleep(200_000)
        } while Date() < deadline
        try Self.expectVisitsCountedOnce(gw2)
        #expect(gw2.stop() == 0)
        #expect(gw3.stop() == 0)
        let events = receiver.delivered
        let repeats = Self.repeats(events)
        // On a repeat, what each gateway's engine made for that asset: where they diverged.
        let engineMade = { (d: APIDaemon, subject: String) -> String in
            ((try? Self.storedAlerts(d)) ?? []).filter { $0["subject"] as? String == subject }.map {
                "\($0["id"]!) \(($0["type"] as? String ?? "").dropFirst(13)) \(($0["data"] as? [String: Any])?["zone"] ?? "") "
                    + "\(SiteTests.seconds($0["time"] as? String ?? "") ?? 0)"
            }.joined(separator: "; ")
        }
        let subjects = Set(repeats.map { String($0.0.split(separator: " ")[2]) })
        let diverged = subjects.map { "\($0): gw1 made \(engineMade(gw1, $0)) | gw2 made \(engineMade(gw2, $0))" }
        let killedAt = SiteTests.seconds(Self.rfc3339(killed)) ?? 0
        #expect(
            repeats.isEmpty,
            "delivered twice under two ids: \(repeats); killed at \(killedAt); \(diverged.joined(separator: " || "))")
        #expect(
            lost.isEmpty,
            "the site's alerts never delivered: \(lost.map { "\($0["type"]!) \($0["subject"]!) \($0["time"]!)" })")
        #expect(events.allSatisfy { $0["source"] as? String == "beacond://sim-store" })
        // The tags' alerts: each told once, by the locator of the moment.
        let tagAlerts = events.filter { ($0["type"] as? String ?? "").hasPrefix("beacond.asset.") }.map {
            "\($0["type"]!) \($0["subject"]!) from \($0["sender"] ?? "?")"
        }
        #expect(
            tagAlerts.filter { $0.hasPrefix("beacond.asset.battery_low tag-22") } == [
                "beacond.asset.battery_low tag-22 from gw1"
            ], "\(tagAlerts)")
        #expect(
            tagAlerts.filter { $0.hasPrefix("beacond.asset.missing") } == ["beacond.asset.missing tag-23 from gw2"],
            "\(tagAlerts)")
        return (events.count, repeats.count, lost.count)
    }
}
