import Foundation
import TestSupport
import Testing

/// Webhooks against real local HTTP receivers (SPEC §4.2): signed batches, retries in order,
/// 410 disabling, dead letters, and each webhook independent of the others.
@Suite(.serialized) struct WebhookDeliveryTests {
    static func site(regions: Int) -> String {
        "clients:\n  - id: app\n    regions:\n"
            + (1...regions).map { "      - {id: r\($0), uuid: \(APIDaemon.uuid), major: \($0)}\n" }.joined()
    }

    static func webhook(_ id: String, _ receiver: WebhookReceiver, secretFile: String? = nil, extra: String = "")
        -> String
    {
        "  - {id: \(id), url: \"\(receiver.url)\", events: [\"region.*\"], batch: {max_events: 2, max_delay: 50ms}"
            + (secretFile.map { ", secret_file: \($0)" } ?? "") + extra + "}\n"
    }

    /// Regions stay inside for the test's length: the events are exactly the first states.
    static let monitoring = "enter_sightings: 1, exit_timeout: 5m"

    /// A daemon (not started) with `regions` regions that enter on one sighting, and a webhook
    /// `crm` (with `extra` settings) for their events to `receiver`.
    static func daemon(regions: Int, webhook receiver: WebhookReceiver, extra: String = "") throws -> APIDaemon {
        try APIDaemon(
            extra: site(regions: regions) + "webhooks:\n" + webhook("crm", receiver, extra: extra),
            monitoring: monitoring)
    }

    func regionEventIDs(_ d: APIDaemon) throws -> [String] {
        try d.history(type: "region.*").compactMap { $0["id"] as? String }
    }

    @Test func batchesAreSignedRetriedAndDeliveredInOrder() throws {
        let good = try WebhookReceiver(secret: "s3cret", fail: 2)
        let wrongKey = try WebhookReceiver(secret: "not-the-key")
        let dir = try Executables.temporaryDirectory()
        let secret = dir.appendingPathComponent("hook.secret").path
        try "s3cret\n".write(toFile: secret, atomically: true, encoding: .utf8)
        let d = try APIDaemon(
            extra: Self.site(regions: 5) + "webhooks:\n" + Self.webhook("crm", good, secretFile: secret)
                + Self.webhook("wms", wrongKey, secretFile: secret), monitoring: Self.monitoring, dir: dir)
        try d.start()
        try d.post((1...5).map { APIDaemon.sighting(major: $0) })
        _ = try d.waitForHistory("five region states") { $0.count == 5 }
        let expected = try regionEventIDs(d)
        try good.waitUntil("every event delivered") { _ in good.acceptedIDs == expected }
        let requests = good.requests
        // Two refusals, then the same first batch again: nothing newer overtakes it
        #expect(requests.prefix(3).map { $0["status"] as? Int } == [500, 500, 200])
        #expect(Set(requests.prefix(3).map { $0["ids"] as? [String] ?? [] }).count == 1)
        #expect(requests.allSatisfy { ($0["ids"] as? [String])?.count ?? 0 <= 2 }, "batch.max_events")
        // Python's hmac agrees with every signature (the trailing newline of the file is not key)
        #expect(requests.allSatisfy { $0["signature_ok"] as? Bool == true })
        #expect(requests.allSatisfy { $0["content_type"] as? String == "application/cloudevents-batch+json" })
        // A receiver holding another key rejects them: the check is real
        try wrongKey.waitUntil("wms deliveries") { _ in wrongKey.acceptedIDs == expected }
        #expect(wrongKey.requests.allSatisfy { $0["signature_ok"] as? Bool == false })
        let outbox = try d.client.request("GET", "/v1/outbox").object["webhooks"] as? [[String: Any]]
        #expect(outbox?.map { $0["pending"] as? Int } == [0, 0])
        #expect(outbox?.first?["failed_requests"] as? Int == 2)
        #expect(d.stop() == 0)
    }

    @Test func a410DisablesOnlyThatWebhookAndKeepsItsEventsAsDeadLetters() throws {
        let gone = try WebhookReceiver(status: 410)
        let healthy = try WebhookReceiver()
        let d = try APIDaemon(
            extra: Self.site(regions: 3) + "webhooks:\n" + Self.webhook("old", gone) + Self.webhook("new", healthy),
            monitoring: Self.monitoring)
        try d.start()
        try d.post((1...3).map { APIDaemon.sighting(major: $0) })
        _ = try d.waitForHistory("three region states") { $0.count == 3 }
        let expected = try regionEventIDs(d)
        try healthy.waitUntil("the healthy webhook's deliveries") { _ in healthy.acceptedIDs == expected }
        var outbox: [String: Any] = [:]
        let deadline = Date().addingTimeInterval(10)
        repeat {
            outbox = try d.client.request("GET", "/v1/outbox").object
        } while ((outbox["webhooks"] as? [[String: Any]])?.first?["state"] as? String) != "disabled"
            && Date() < deadline
        let old = (outbox["webhooks"] as? [[String: Any]])?.first
        #expect(old?["state"] as? String == "disabled" && old?["pending"] as? Int == 0)
        let dead = outbox["dead_letters"] as? [[String: Any]] ?? []
        #expect(Set(dead.compactMap { $0["id"] as? String }) == Set(expected))
        #expect(dead.allSatisfy { $0["reason"] as? String == "gone" && $0["webhook"] as? String == "old" })
        #expect(gone.requests.count == 1, "no retries after 410")
        // Still disabled after a restart (its url did not change)
        #expect(d.stop() == 0)
        try d.start()
        try d.post([APIDaemon.sighting(major: 1)])
        let status = try d.client.request("GET", "/v1/status").object["webhooks"] as? [[String: Any]]
        #expect(status?.first?["state"] as? String == "disabled")
        #expect(gone.requests.count == 1)
        #expect(d.stop() == 0)
    }

    /// Two regions with a webhook `crm` to `receiver` whose events die after `maxAge`.
    static func oneWebhook(_ receiver: WebhookReceiver, maxAge: String) -> String {
        Self.site(regions: 2) + "webhooks:\n" + Self.webhook("crm", receiver, extra: ", max_age: \(maxAge)")
    }

    /// Starts a daemon whose webhook never answers 2xx, enters two regions, and waits (15 s
    /// at most) until both events are dead letters; returns them.
    func twoDeadLetters(maxAge: String) throws -> (APIDaemon, WebhookReceiver, [[String: Any]]) {
        let down = try WebhookReceiver(fail: 1_000_000)
        let d = try APIDaemon(extra: Self.oneWebhook(down, maxAge: maxAge), monitoring: Self.monitoring)
        try d.start()
        try d.post((1...2).map { APIDaemon.sighting(major: $0) })
        var dead: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(15)
        while dead.count < 2 && Date() < deadline {
            dead = try d.client.request("GET", "/v1/outbox").object["dead_letters"] as? [[String: Any]] ?? []
            usleep(50_000)
        }
        return (d, down, dead)
    }

    @Test func eventsUndeliveredForMaxAgeBecomeDeadLetters() throws {
        let (d, down, dead) = try twoDeadLetters(maxAge: "2s")
        #expect(dead.count == 2 && dead.allSatisfy { $0["reason"] as? String == "max_age" })
        #expect(down.requests.count >= 2, "it was retried before it expired")
        let metrics = try d.client.request("GET", "/metrics").body
        #expect(metrics.contains("beacond_dead_letters{webhook=\"crm\"} 2"))
        #expect(metrics.contains("beacond_dead_letters_discarded_total{webhook=\"crm\"} 0"))
        #expect(metrics.contains("beacond_outbox_depth{webhook=\"crm\"} 0"))
        #expect(Self.familiesAreContiguous(metrics), "\(metrics)")
        #expect(d.stop() == 0)
    }

    /// A webhook that works again after losing events is not "ok": doctor says how many were
    /// never delivered and where to see them.
    @Test func doctorWarnsOfEventsAWebhookNeverDelivered() throws {
        let (d, _, dead) = try twoDeadLetters(maxAge: "1s")
        #expect(dead.count == 2)
        // The receiver is fixed (a new one at a new url) and the daemon restarted: nothing is
        // failing now, but two events were lost
        #expect(d.stop() == 0)
        let fixed = try WebhookReceiver()
        try d.rewrite(extra: Self.oneWebhook(fixed, maxAge: "1s"))
        try d.start()
        let doctor = try runCommand(
            Executables.built("beaconctl"), ["--socket", d.socketPath, "doctor", "--config", d.configPath])
        #expect(doctor.stdout.contains("[WARN] webhook crm: 0 delivered; 2 never delivered"), "\(doctor.stdout)")
        #expect(d.stop() == 0)
        withExtendedLifetime(fixed) {}
    }

    /// Before any event is sent (a new install, a quiet site) doctor tells a webhook whose host
    /// takes no connection — a closed port, a name that does not resolve — from one that does,
    /// without sending either a request. Before, all three were "ok: 0 delivered".
    @Test func doctorTriesEachWebhooksHostBeforeAnyEventIsSent() throws {
        let good = try WebhookReceiver()
        let closed = try Self.closedPort()
        let d = try APIDaemon(
            extra: Self.site(regions: 1) + "webhooks:\n" + Self.webhook("crm", good)
                + "  - {id: wms, url: \"http://127.0.0.1:\(closed)/hook\"}\n"
                + "  - {id: erp, url: \"https://no-such-host.invalid/hook\"}\n",
            monitoring: Self.monitoring)
        try d.start()
        let doctor = try runCommand(
            Executables.built("beaconctl"), ["--socket", d.socketPath, "doctor", "--config", d.configPath])
        let port = good.url.split(separator: ":").last!.prefix { $0.isNumber }
        #expect(
            doctor.stdout.contains("[ok] webhook crm: 0 delivered (127.0.0.1:\(port) takes connections)"),
            "\(doctor.stdout)")
        #expect(
            doctor.stdout.contains("[FAIL] webhook wms: cannot connect to 127.0.0.1:\(closed): Connection refused"),
            "\(doctor.stdout)")
        #expect(doctor.stdout.contains("[FAIL] webhook erp: cannot connect to no-such-host.invalid does not resolve"))
        #expect(doctor.status == 1)
        #expect(good.requests.isEmpty, "a check sends no request")

        // One that has delivered and whose receiver went down since (or that goes through a
        // proxy, which the check does not use): a warning, not a failure.
        try d.post([APIDaemon.sighting(major: 1)])
        try good.waitUntil("the first event") { _ in good.acceptedIDs.count == 1 }
        // The receiver logs a request before it answers: killed at once, its answer could be
        // lost and the event not delivered. Killed once the daemon counts it delivered.
        try eventually("crm's delivery acknowledged") {
            let hooks = try d.client.request("GET", "/v1/status").object["webhooks"] as? [[String: Any]] ?? []
            return hooks.first { $0["id"] as? String == "crm" }?["delivered"] as? Int == 1
        }
        kill(good.process.processIdentifier, SIGKILL)
        good.process.waitUntilExit()
        // The daemon answers reachability from a probe at most a second old (issue 38 #17).
        usleep(1_100_000)
        let after = try runCommand(
            Executables.built("beaconctl"), ["--socket", d.socketPath, "doctor", "--config", d.configPath])
        #expect(
            after.stdout.contains(
                "[WARN] webhook crm: 1 delivered, but cannot connect now to 127.0.0.1:\(port): Connection refused "
                    + "(from beacond's process)"),
            "\(after.stdout)")
        #expect(d.stop() == 0)
    }

    /// A local TCP port nothing listens on (bound, then closed).
    static func closedPort() throws -> Int { try freeLoopbackPort() }

    /// A webhook removed from the file, by SIGHUP or by a restart: what waited for it is
    /// shown as dead letters (reason `removed`), not counted as pending for ever.
    @Test func aRemovedWebhooksBacklogBecomesDeadLetters() throws {
        let down = try WebhookReceiver(fail: 1_000_000)
        let hooks = ["crm", "wms"].map { Self.webhook($0, down, extra: ", max_age: 1h") }
        let d = try APIDaemon(
            extra: Self.site(regions: 2) + "webhooks:\n" + hooks.joined(), monitoring: Self.monitoring)
        let notify = try NotifySocket(path: d.dir.appendingPathComponent("notify.sock").path)
        try d.start(environment: ["NOTIFY_SOCKET": notify.path])
        _ = try notify.until("READY=1") { $0.contains("READY=1") }
        try d.post((1...2).map { APIDaemon.sighting(major: $0) })
        func outbox() throws -> [String: Any] {
            try d.client.request("GET", "/v1/status").object["outbox"] as? [String: Any] ?? [:]
        }
        try d.waitForStatus("four events waiting") { ($0["outbox"] as? [String: Any])?["pending"] as? Int == 4 }

        try d.rewrite(extra: Self.site(regions: 2) + "webhooks:\n" + hooks[0])
        kill(d.daemon!.process.processIdentifier, SIGHUP)
        _ = try notify.until("READY=1 after the reload") { $0.contains("READY=1") }
        // wms's worker retires them after its last attempt (it is backing off: at once)
        try d.waitForStatus("wms's events dead-lettered") {
            ($0["outbox"] as? [String: Any])?["dead_letters"] as? Int == 2
        }
        #expect(try outbox()["pending"] as? Int == 2)
        let dead = try d.client.request("GET", "/v1/outbox").object["dead_letters"] as? [[String: Any]] ?? []
        #expect(
            dead.count == 2
                && dead.allSatisfy { $0["webhook"] as? String == "wms" && $0["reason"] as? String == "removed" })

        #expect(d.stop() == 0)
        #expect(
            d.daemon!.logs.contains { $0.isLog("webhook.removed", ["webhook": "wms", "undelivered": "2"]) },
            "on the reload")
        try d.rewrite(extra: Self.site(regions: 2))
        try d.start()
        #expect(try outbox()["pending"] as? Int == 0 && outbox()["dead_letters"] as? Int == 4)
        #expect(d.stop() == 0)
        #expect(d.daemon!.logs.contains { $0.isLog("webhook.removed", ["webhook": "crm", "undelivered": "2"]) })
    }

    /// `systemctl reload` after rotating a webhook's secret file, the YAML unchanged: the new
    /// key signs from then on. A webhook whose settings did not change keeps running: its
    /// counters go on (a restarted worker would start again from 0, and could send a batch
    /// in flight twice).
    @Test func aReloadPicksUpARotatedSecretAndLeavesOtherWebhooksRunning() throws {
        let signed = try WebhookReceiver(secret: "new-key")
        let other = try WebhookReceiver()
        let dir = try Executables.temporaryDirectory()
        let secret = dir.appendingPathComponent("hook.secret").path
        try "old-key\n".write(toFile: secret, atomically: true, encoding: .utf8)
        let d = try APIDaemon(
            extra: Self.site(regions: 2) + "webhooks:\n" + Self.webhook("crm", signed, secretFile: secret)
                + Self.webhook("wms", other), monitoring: Self.monitoring, dir: dir)
        let notify = try NotifySocket(path: dir.appendingPathComponent("notify.sock").path)
        try d.start(environment: ["NOTIFY_SOCKET": notify.path])
        _ = try notify.until("READY=1") { $0.contains("READY=1") }
        try d.post([APIDaemon.sighting(major: 1)])
        try signed.waitUntil("the first event") { _ in signed.acceptedIDs.count == 1 }
        try other.waitUntil("the first event") { _ in other.acceptedIDs.count == 1 }
        #expect(signed.requests.last?["signature_ok"] as? Bool == false, "signed with the old key")

        try "new-key\n".write(toFile: secret, atomically: true, encoding: .utf8)
        kill(d.daemon!.process.processIdentifier, SIGHUP)
        _ = try notify.until("READY=1 after the reload") { $0.contains("READY=1") }
        try d.post([APIDaemon.sighting(major: 2)])
        try signed.waitUntil("the second event") { _ in signed.acceptedIDs.count == 2 }
        try other.waitUntil("the second event") { _ in other.acceptedIDs.count == 2 }
        #expect(signed.requests.last?["signature_ok"] as? Bool == true, "signed with the new key")
        let hooks = try d.client.request("GET", "/v1/outbox").object["webhooks"] as? [[String: Any]] ?? []
        #expect(hooks.map { $0["id"] as? String } == ["crm", "wms"])
        #expect(hooks.map { $0["delivered"] as? Int } == [1, 2], "crm restarted with the new key, wms kept")
        #expect(d.stop() == 0)
        #expect(d.daemon!.logs.contains { $0.contains("webhooks=\"1 started, 1 kept, 1 stopped\"") })
    }

    /// A webhook whose key (or url) changes on a reload while a batch is in flight: the old
    /// worker's last attempt delivers it, and the new worker starts only after that attempt,
    /// so the batch is not read and sent a second time. (Until 2026-11-23 both ran together
    /// for up to 2.5 s and the receiver got the batch twice.)
    @Test func aChangedWebhookSendsNoBatchTwice() throws {
        let slow = try WebhookReceiver(secret: "new-key", delay: 1.5)
        let dir = try Executables.temporaryDirectory()
        let secret = dir.appendingPathComponent("hook.secret").path
        try "old-key\n".write(toFile: secret, atomically: true, encoding: .utf8)
        let d = try APIDaemon(
            extra: Self.site(regions: 2) + "webhooks:\n" + Self.webhook("crm", slow, secretFile: secret),
            monitoring: Self.monitoring, dir: dir)
        let notify = try NotifySocket(path: dir.appendingPathComponent("notify.sock").path)
        try d.start(environment: ["NOTIFY_SOCKET": notify.path])
        _ = try notify.until("READY=1") { $0.contains("READY=1") }
        try d.post([APIDaemon.sighting(major: 1)])
        try slow.waitUntil("the first batch in flight") { $0.contains { $0["waiting"] as? Bool == true } }

        try "new-key\n".write(toFile: secret, atomically: true, encoding: .utf8)
        kill(d.daemon!.process.processIdentifier, SIGHUP)
        _ = try notify.until("READY=1 after the reload") { $0.contains("READY=1") }
        try d.post([APIDaemon.sighting(major: 2)])
        _ = try d.waitForHistory("two region states") { $0.count == 2 }
        let expected = try regionEventIDs(d)
        try slow.waitUntil("the second event") { _ in slow.acceptedIDs.contains(expected[1]) }
        #expect(slow.acceptedIDs == expected, "each event once, in order")
        let answered = slow.requests.filter { $0["status"] as? Int == 200 }
        #expect(answered.map { $0["signature_ok"] as? Bool } == [false, true], "the old key, then the new one")
        #expect(d.stop() == 0)
        #expect(d.daemon!.logs.contains { $0.contains("webhooks=\"1 started, 0 kept, 1 stopped\"") })
    }

    /// A receiver down for good: its events expire as the site makes them, and the log says
    /// so once, then once a minute with the sum, and once more at stop for the rest — not a
    /// line for every few events (about 2,000 lines an hour on the simulated store).
    @Test func expiriesAreToldOnceAMinuteNotEachTime() throws {
        let down = try WebhookReceiver(fail: 1_000_000)
        let d = try APIDaemon(
            extra: Self.site(regions: 4) + "webhooks:\n" + Self.webhook("crm", down, extra: ", max_age: 1s"),
            monitoring: Self.monitoring)
        try d.start()
        // Each new event wakes the worker, which then finds the one before it past max_age.
        for major in 1...4 {
            try d.post([APIDaemon.sighting(major: major)])
            usleep(1_200_000)
        }
        try d.waitForStatus("four dead letters") {
            ($0["outbox"] as? [String: Any])?["dead_letters"] as? Int == 4
        }
        #expect(d.stop() == 0)
        let lines = d.daemon!.logs.filter { $0.isLog("webhook.dead_letters", ["webhook": "crm"]) }
        let counts = lines.compactMap { line in (try? LogfmtReader.fields(line))?["events"].flatMap { Int($0) } }
        #expect(lines.count == 2, "\(lines)")
        #expect(counts.reduce(0, +) == 4, "every expired event told: \(lines)")
        #expect(lines.first?.contains("next=\"later expiries are summed once a minute") == true)
        #expect(lines.last?.contains("over_s=") == true, "the rest, at stop")
    }

    /// The Prometheus text format's rule: a family's HELP, TYPE and samples form one block.
    /// (Until 2026-11-23 the webhook families' headers came first and their samples after.)
    static func familiesAreContiguous(_ text: String) -> Bool {
        var seen: [Substring] = []
        for line in text.split(separator: "\n") {
            let name =
                line.hasPrefix("# ")
                ? line.split(separator: " ")[2] : line.prefix { $0 != "{" && $0 != " " }
            guard seen.last != name else { continue }
            if seen.contains(name) { return false }
            seen.append(name)
        }
        return true
    }
}

/// SIGTERM flushes and stops within 5 s even with a webhook request hanging.
@Suite(.serialized) struct StopTests {
    @Test func aHungReceiverDoesNotHoldUpAStop() throws {
        let hung = try WebhookReceiver(hang: true)
        let d = try APIDaemon(
            extra: WebhookDeliveryTests.site(regions: 2) + "webhooks:\n"
                + "  - {id: slow, url: \"\(hung.url)\", events: [\"region.*\"], timeout: 60s, batch: {max_delay: 0s}}\n",
            monitoring: WebhookDeliveryTests.monitoring)
        try d.start()
        try d.post([APIDaemon.sighting(major: 1)])
        try hung.waitUntil("the request in flight") { $0.contains { $0["hung"] as? Bool == true } }
        let started = Date()
        #expect(d.stop() == 0)
        let took = Date().timeIntervalSince(started)
        #expect(took < 5, "stopped in \(took) s")
        // What was not acknowledged is still in the outbox for the next start
        try d.start()
        let outbox = try d.client.request("GET", "/v1/outbox").object["webhooks"] as? [[String: Any]]
        #expect((outbox?.first?["pending"] as? Int ?? 0) >= 1)
        d.crash()
    }
}
