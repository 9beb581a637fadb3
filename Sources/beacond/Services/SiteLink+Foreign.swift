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
    /// What each foreign receiver gave, for `/v1/status` and `/metrics`.
    struct ForeignTally {
        var sightings = 0
        var lastHeard: Timestamp?
    }

    /// A message on one of their topics (the client's thread); false when the topic is none
    /// of theirs.
    func foreignMessage(topic: String, payload: UnsafeRawBufferPointer) -> Bool {
        let now = clock()
        guard let outcome = foreign.take(topic: topic, payload: payload, at: now) else { return false }
        if let s = outcome.sighting {
            engine.submit(.sightings([s]))
            foreignTallies.withLock {
                $0[s.receiver, default: ForeignTally()].sightings += 1
                $0[s.receiver]!.lastHeard = now
            }
        }
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

    /// Each mapped receiver with what it gave, for the site's status.
    var foreignReceivers: [StatusReport.Site.ForeignReceiver] {
        let tallies = foreignTallies.withLock { $0 }
        let settings = site.foreign
        return settings.receiverIDs.sorted().map { id in
            var r = StatusReport.Site.ForeignReceiver()
            r.receiver = id
            if let (system, name) = settings.name(of: id) { (r.system, r.name) = (system.rawValue, name) }
            r.sightings = tallies[id]?.sightings ?? 0
            r.lastHeard = tallies[id]?.lastHeard.map(RFC3339.format)
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
