import API
import BeaconConfig
import BeaconCore
import Logging
import MQTT
import Publishing
import Storage
import Synchronization

/// A hand-over that neither repeats nor re-decides (SPEC §6.3): the locator tells the others
/// of each alert before delivering it (`gateways/<id>/decided`), and each standby puts the
/// locator's id and body on its own copy (`HandOverMatcher`, `StateStore.takeDecision`).
extension SiteLink {
    /// At most this many decisions in one message (about 600 bytes each, under the broker's
    /// packet limit with room to spare).
    static let decisionsPerMessage = 500

    /// Each batch of this gateway's events, once stored (the engine's thread, in order; the
    /// outbox has them, enqueued at `enqueuedAt`). An alert the locator already decided takes
    /// its id; as the locator, the rest are told to the site, and its workers send them once
    /// the broker has them — but a zone alert that repeats what the site last decided for its
    /// place (`DecidedZones`) is taken out of the outboxes instead; as a standby, they wait
    /// for the locator's decision.
    func stored(_ events: [StateStore.StoredEvent], enqueuedAt: Timestamp) {
        let now = clock()
        let isLocator = gate.isLocator
        var decisions: [SiteDecision] = []
        for event in events where SiteDecision.handedOver(type: event.type) {
            guard let key = event.key ?? HandOverKey(body: event.body) else { continue }
            let theirs = matcher.withLock {
                $0.madeHere(id: event.id, key: key, time: event.time, wait: !isLocator, at: now)
            }
            if let theirs {
                adopt(event.id, theirs)
            } else if isLocator, decide(event.id, key: key, time: event.time, at: now) {
                decisions.append(
                    SiteDecision(id: event.id, key: key, time: event.time, enqueuedAt: enqueuedAt, body: event.body))
            }
        }
        gate.told(through: enqueuedAt, waiting: tell(decisions), at: now)
    }

    /// As the locator, whether this gateway's own alert `id` is to be decided: true, and
    /// recorded as decided, unless it repeats the site's last decision for its place — then it
    /// is taken out of every outbox (its engine saw the asset leave and come back where the
    /// last locator did not), counted as `repeated_alert` and logged.
    private func decide(_ id: String, key: HandOverKey, time: Timestamp, at now: Timestamp) -> Bool {
        let repeats = decidedZones.withLock { ledger in
            if ledger.repeats(key: key, id: id) { return true }
            ledger.decided(key: key, id: id, time: time)
            return false
        }
        guard repeats else { return true }
        do { try store.dropOwn(eventID: id) } catch {
            logger.error("site.repeat_not_dropped", metadata: ["event": "\(id)", "error": "\(error)"])
        }
        counters.withLock { $0.dropped["repeated_alert", default: 0] += 1 }
        if warnings.due("repeated alert", at: now) {
            logger.info(
                "site.repeat_dropped",
                metadata: [
                    "event": "\(id)", "alert": "\(key)",
                    "next":
                        "not delivered: the site last told the same for this asset and zone (this gateway's engine saw it leave and come back where the last locator did not); logged once in ten minutes",
                ])
        }
        return false
    }

    /// Publishes decisions on this gateway's `decided` topic; the message ids to wait for.
    private func tell(_ decisions: [SiteDecision]) -> Set<Int32> {
        var waiting = Set<Int32>()
        for start in stride(from: 0, to: decisions.count, by: Self.decisionsPerMessage) {
            let chunk = decisions[start..<min(start + Self.decisionsPerMessage, decisions.count)]
            let text = SiteDecision.message(Array(chunk))
            if let mid = client.publish(.init(topic: topics.decided(gateway), text: text, qos: 1, retain: false)) {
                waiting.insert(mid)
            }
        }
        return waiting
    }

    /// Becoming the locator: the alerts this gateway made as a standby and still holds under
    /// its own ids (no locator decided them, or not yet) are told to the others before any is
    /// delivered, so that the next hand-over does not repeat them under the others' ids. They
    /// are its decisions now: nothing waits to pair them any more.
    func tellBacklog() {
        let now = clock()
        var decisions: [SiteDecision] = []
        do {
            // Those older than the last locator's progress were not its alerts: none is told,
            // in any outbox (each standby worker drops them within a second; this is now).
            if let cutoff = gate.undecidedBefore { try store.dropOwn(enqueuedBefore: cutoff) }
            decisions = try store.ownEntries(excluding: SiteDecision.notHandedOver).compactMap {
                SiteDecision(id: $0.id, body: $0.body, enqueuedAt: $0.enqueuedAt)
            }.filter { decide($0.id, key: $0.key, time: $0.time, at: now) }
        } catch {
            logger.error(
                "site.backlog_unreadable",
                metadata: [
                    "error": "\(error)",
                    "next": "delivering without telling the other gateways; a later hand-over may repeat these alerts",
                ])
        }
        matcher.withLock { $0.forgetOwn() }
        gate.backlogTold(waiting: tell(decisions), at: now)
    }

    /// A `decided` message from gateway `from` (the client's thread).
    func decidedMessage(from: String, _ payload: UnsafeRawBufferPointer) {
        guard from != gateway else { return }
        let now = clock()
        guard isKnownGateway(from) else { return refused("unknown_gateway", from: from, at: now) }
        guard roles.withLock({ $0.mayDecide(from, at: now) }) else {
            return refused("not_locator", from: from, at: now)
        }
        // Of this site (its events' source), and not from the future: an alert its sender
        // could have made.
        guard
            let decisions = SiteDecision.decisions(
                in: String(decoding: payload, as: UTF8.self), source: "beacond://\(site.id)"),
            decisions.allSatisfy({ $0.time - now <= SiteDeliveryGate.markAhead })
        else {
            return refused("bad_decided", from: from, at: now)
        }
        decidedZones.withLock { ledger in
            for decision in decisions { ledger.decided(key: decision.key, id: decision.id, time: decision.time) }
        }
        for var decision in decisions {
            decision.decider = from
            if let own = matcher.withLock({ $0.decided(decision, at: now) }) { adopt(own, decision) }
        }
    }

    /// This gateway's copy `ownID` of an alert takes the decider's id and body.
    private func adopt(_ ownID: String, _ decision: SiteDecision) {
        do {
            try store.takeDecision(
                ownID: ownID, id: decision.id, body: decision.body, time: decision.time, decider: decision.decider,
                enqueuedAt: decision.enqueuedAt)
        } catch {
            logger.error(
                "site.decision_not_saved",
                metadata: [
                    "event": "\(ownID)", "locator_event": "\(decision.id)", "error": "\(error)",
                    "next": "if this gateway takes over, it may send this alert again under its own id",
                ])
        }
    }

    /// A message on the site's role topics refused: counted by reason, logged once per sender
    /// and reason every ten minutes.
    func refused(_ reason: String, from sender: String, at now: Timestamp) {
        counters.withLock { $0.dropped[reason, default: 0] += 1 }
        guard warnings.due("\(sender) \(reason)", at: now) else { return }
        logger.warning(
            "site.message_refused",
            metadata: [
                "sender": "\(sender)", "reason": "\(reason)",
                "next":
                    "ignored; only the gateways the site file names take part (docs/sites.md: lock the broker down); logged again in ten minutes if it goes on",
            ])
    }

    /// Whether `id` is a gateway of the site: one the site file names (or, when it names none,
    /// any).
    func isKnownGateway(_ id: String) -> Bool {
        knownGateways.isEmpty || knownGateways.contains(id)
    }
}
