import API
import BeaconConfig
import BeaconCore
import Logging
import MQTT
import Publishing
import Synchronization

extension SiteLink {
    /// `gateways/<id>/status`, `gateways/<id>/info` and `locator`, on the client's thread:
    /// each updates the roles, and then this gateway announces itself if the rule now
    /// chooses it (SPEC §6.3: the next locator takes over the moment the will arrives).
    func roleMessage(_ topic: SiteTopic, _ text: String, retained isRetained: Bool) {
        let now = clock()
        let about: String? =
            switch topic {
            case let .status(id), let .info(id): id
            default: nil
            }
        if let id = about {
            guard Identifier.problem(id) == nil else { return }
            guard isKnownGateway(id) else { return refused("unknown_gateway", from: id, at: now) }
            // Once this gateway is stopping, its own `offline` (said by `SiteConnection` at the
            // stop, and echoed back) is the truth, not a forgery to put right.
            if id == gateway, client.state.connected, !stopRequested.load(ordering: .relaxed),
                saidOtherwise(topic, text)
            {
                return putRight(topic, text, at: now)
            }
        } else if let a = LocatorElection.Announcement(payload: text, seenAt: now), !isKnownGateway(a.gateway) {
            // An announcement naming a gateway the site file does not: a phantom locator.
            return refused("unknown_gateway", from: a.gateway, at: now)
        }
        updateRoles(at: now) { r in
            guard let id = about else {
                guard let a = LocatorElection.Announcement(payload: text, seenAt: now) else { return }
                r.election.seen(a, live: !isRetained)
                // An announcement as it is made is a sign of life, and may come before the
                // announcer's next batch (a gateway woken from a pause announces first): without
                // this, the old locator would take it for silent and announce again, and the two
                // would trade the role. A retained one replayed at subscription proves nothing.
                if !isRetained, a.gateway != r.election.me?.id, r.online[a.gateway] != nil {
                    r.lastHeard[a.gateway] = now
                    r.refresh(a.gateway, at: now)
                }
                return
            }
            guard r.online[id] != nil || r.online.count < SiteRoles.maxGateways else { return }
            if case .status = topic {
                r.online[id] = text == "online"
                if text == "online" { r.lastHeard[id] = now }
            } else {
                r.info[id] = GatewayInfo(payload: text)
            }
            r.refresh(id, at: now)
        }
    }

    /// Whether a message on this gateway's own `status` or `info` says something else than it
    /// does: another client publishing in its name (or its previous connection's will, arriving
    /// after this one said `online`).
    private func saidOtherwise(_ topic: SiteTopic, _ text: String) -> Bool {
        switch topic {
        case .status: text != "online"
        case .info: GatewayInfo(payload: text) != info
        default: false
        }
    }

    /// Says again, retained, what this gateway is: a forged `offline` or info would otherwise
    /// take it out of the election on every gateway. Counted and logged (rate-limited).
    private func putRight(_ topic: SiteTopic, _ text: String, at now: Timestamp) {
        sayWhoIAm()
        guard warnings.due("put right \(topic.path)", at: now) else { return }
        logger.warning(
            "site.status_put_right",
            metadata: [
                "topic": "\(topics[topic])", "said": "\(text.prefix(80))",
                "next":
                    "published again as this gateway says it; another client writes this gateway's topics: lock the broker down (docs/sites.md)",
            ])
    }

    /// `gateways/<from>/delivered/<webhook>`: how far that gateway delivered (the client's thread).
    func deliveredMessage(from: String, webhook: String, _ payload: UnsafeRawBufferPointer) {
        let now = clock()
        guard from != gateway, Identifier.problem(from) == nil,
            Identifier.problem(webhook) == nil || webhook == MQTTBatchTransport.outboxID
        else { return }
        guard isKnownGateway(from) else { return refused("unknown_gateway", from: from, at: now) }
        guard let through = SiteDeliveryGate.through(String(decoding: payload, as: UTF8.self)) else {
            // An empty retained message clears a mark: nothing to take.
            if payload.isEmpty { return }
            return refused("bad_delivered", from: from, at: now)
        }
        if !gate.deliveredElsewhere(from: from, webhook: webhook, through: through, at: now) {
            refused("bad_delivered", from: from, at: now)
        }
    }

    /// A batch from `id` arrived: it is alive.
    func heard(_ id: String, at now: Timestamp) {
        updateRoles(at: now) { r in
            guard r.online[id] != nil else { return }
            r.lastHeard[id] = now
            r.refresh(id, at: now)
        }
    }

    /// Every gateway checked against `SiteRoles.silence` (the batcher's thread, every 250 ms).
    func checkSilence(at now: Timestamp) {
        let connected = client.state.connected
        updateRoles(at: now) { r in
            if connected != r.connected {
                r.connectedSince = connected ? now : nil
                if connected { r.rejoined(at: now) }
            }
            r.connected = connected
            // This process did not run for a while (stopped, swapped out, a suspended VM):
            // what it last heard of the others is old because it was not listening, not
            // because they fell silent. They get a fresh `silence` before being passed over.
            if let last = r.lastCheck, now - last > .seconds(2) {
                for id in r.lastHeard.keys { r.lastHeard[id] = now }
            }
            r.lastCheck = now
            for id in r.online.keys { r.refresh(id, at: now) }
        }
    }

    /// Applies `change`, then announces this gateway if the rule now chooses it, and logs a
    /// change of this gateway's role.
    private func updateRoles(at now: Timestamp, _ change: (inout SiteRoles) -> Void) {
        let (announcement, was, isLocator) = roles.withLock { r -> (LocatorElection.Announcement?, Bool, Bool) in
            let was = r.election.isLocator
            let announced = r.election.announced?.gateway
            change(&r)
            let decided = r.election.decide(at: now)
            r.announcementChanged(from: announced, at: now)
            // Under the roles' lock: two threads update them, and the gate must end with the
            // last one's answer.
            gate.setLocator(r.election.isLocator, at: now)
            return (decided, was, r.election.isLocator)
        }
        if let announcement {
            client.publish(.init(topic: topics.locator, text: announcement.text, qos: 1, retain: true))
        }
        if isLocator, !was { tellBacklog() }
        if was != isLocator {
            let election = roles.withLock { $0.election }
            logger.info(
                "site.locator",
                metadata: [
                    "role": "\(isLocator ? "locator" : "standby")",
                    "locator": "\(election.announced?.gateway ?? "none")",
                    "epoch": "\(election.announced?.epoch ?? 0)",
                    "next":
                        "\(isLocator ? "this gateway delivers the site's events" : "another gateway delivers the site's events; this one keeps hot state")",
                ])
        }
    }

    /// As the locator: how far each webhook was delivered, for the standbys (retained, so a
    /// gateway that starts later knows it too).
    func publishDeliveries() {
        for (webhook, through) in gate.takeToPublish() {
            client.publish(
                .init(
                    topic: topics.delivered(gateway, webhook: webhook), text: SiteDeliveryGate.text(through), qos: 1,
                    retain: true))
        }
    }
}
