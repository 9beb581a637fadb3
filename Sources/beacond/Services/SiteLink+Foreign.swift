import API
import APIModel
import BeaconConfig
import BeaconCore
import BeaconRuntime
import Logging
import MQTT
import Synchronization

/// ESPresense nodes and OpenMQTTGateway/Theengs gateways on the site's broker (SPEC §9):
/// their messages become sightings of the receivers their rooms and gateway names map to, on
/// every gateway (each keeps the whole store's state, as with the gateways' batches); the
/// locator alone decides and delivers what follows from them.
extension SiteLink {
    /// A message on one of their topics (the client's thread); false when the topic is none
    /// of theirs.
    func foreignMessage(topic: String, payload: UnsafeRawBufferPointer) -> Bool {
        let now = clock()
        guard let outcome = foreign.take(topic: topic, payload: payload, at: now) else { return false }
        foreignLastMessage.withLock { $0[outcome.system] = now }
        if let s = outcome.sighting { engine.submit(.sightings([s])) }
        counters.withLock { c in
            if outcome.sighting != nil { c.sightingsReceived += 1 }
            if let reason = outcome.dropped { c.dropped[reason, default: 0] += 1 }
        }
        if let name = outcome.newUnmapped {
            let system = outcome.system
            logger.warning(
                "site.unmapped_receiver",
                metadata: [
                    "system": "\(system.rawValue)", "name": "\(name)",
                    "next":
                        "its messages are counted and dropped; map it to a receiver under site.\(system.rawValue).\(system == .espresense ? "rooms" : "gateways") to use them",
                ])
        } else if let problem = outcome.problem, warnings.due("\(outcome.dropped ?? "")", at: now) {
            logger.warning(
                "site.foreign_message_dropped",
                metadata: [
                    "reason": "\(outcome.dropped ?? "")", "topic": "\(topic.prefix(120))", "error": "\(problem)",
                    "next": "counted under beacond_site_dropped_total; logged again in ten minutes if it goes on",
                ])
        }
        return true
    }

    /// A system's topic silent this long after a connect is said (`site.foreign_silent`).
    static let foreignSilence = TimeSpan.seconds(30)

    /// The configured systems' topic filters on which nothing arrived since this gateway
    /// connected `foreignSilence` ago or more. Why: mosquitto grants a subscription its ACL
    /// does not let the user read, and then delivers nothing, with no error anywhere: a node
    /// publishing elsewhere, or an ACL without the nodes' topics, looked exactly like nodes
    /// that hear nothing (issue 51, item 4). Said for any broker, whatever it does.
    func silentForeignFilters(at now: Timestamp) -> [String] {
        guard let since = roles.withLock({ $0.connectedSince }), now - since >= Self.foreignSilence else { return [] }
        let last = foreignLastMessage.withLock { $0 }
        return ForeignIntake.System.allCases.compactMap { system in
            guard let filter = site.foreign.filter(system), (last[system].map { $0 < since } ?? true) else {
                return nil
            }
            return filter
        }
    }

    /// Says, once per connection, which systems' topics stayed silent (the batcher's thread).
    func tellForeignSilence(at now: Timestamp) {
        let silent = silentForeignFilters(at: now)
        guard !silent.isEmpty, let since = roles.withLock({ $0.connectedSince }),
            foreignSilenceTold.withLock({ told in
                defer { told = since }
                return told != since
            })
        else { return }
        for filter in silent {
            logger.warning(
                "site.foreign_silent",
                metadata: [
                    "topic": "\(filter)", "for_s": "\(Int((now - since).seconds))",
                    "next":
                        "nothing arrived on it since this gateway connected: if the nodes hear tags, check that they publish to this broker under this prefix, and that the broker's ACL lets this gateway's user read the topic (docs/sites.md, \"Locking the broker down\")",
                ])
        }
    }

    /// Each mapped receiver with what it gave, for the site's status: counted where every
    /// receiver is, in the engine's receiver table (`BeaconEngine.tally`), as of its last turn.
    var foreignReceivers: [StatusReport.Site.ForeignReceiver] {
        let tallies = engine.glance.receivers
        let settings = site.foreign
        return settings.receiverIDs.sorted().map { id in
            var r = StatusReport.Site.ForeignReceiver()
            r.receiver = id
            if let (system, name) = settings.name(of: id) { (r.system, r.name) = (system.rawValue, name) }
            r.sightings = tallies[id]?.sightings ?? 0
            r.lastHeard = tallies[id].map { RFC3339.format($0.lastHeard) }
            return r
        }
    }
}

extension SiteLink {
    /// The simulator's other-system receivers (`SimulatedInput`): what they hear, published as
    /// ESPresense's and OpenMQTTGateway's messages, as their firmware would.
    func publishForeign(_ batch: [Sighting]) {
        let settings = site.foreign
        for s in batch {
            guard let (system, name) = settings.name(of: s.receiver), client.state.connected else { continue }
            let message: (topic: String, payload: String)
            switch system {
            case .espresense:
                message = ESPresenseMessage.encode(s, prefix: settings.espresense!.prefix, room: name)
            case .openMQTTGateway:
                message = OpenMQTTGatewayMessage.encode(s, prefix: settings.openMQTTGateway!.prefix, gateway: name)
            }
            client.publish(.init(topic: message.topic, text: message.payload, qos: 0, retain: false))
        }
    }
}
