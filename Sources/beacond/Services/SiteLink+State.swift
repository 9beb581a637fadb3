import API
import BeaconConfig
import BeaconCore
import BeaconRuntime
import Logging
import MQTT
import Publishing
import Synchronization

/// The site's retained state on the broker (`assets/…`, `regions/…`, Home Assistant
/// discovery), kept true by the locator alone (SPEC §6.3).
extension SiteLink {
    /// How often the locator compares the site's state with what the broker holds.
    static let statePeriod = TimeSpan.seconds(1)

    /// On the batcher's thread, every `statePeriod`: as the locator and connected, what
    /// changed since the last look (`RetainedTopics.plan`). A standby forgets what it sent, so
    /// that it says everything again when it becomes the locator: the last one may have died
    /// with changes unsent.
    func publishState(at now: Timestamp) {
        guard gate.isLocator, client.state.connected else {
            retained.withLock { $0.resend() }
            return
        }
        guard stateDue(at: now) else { return }
        let topics = topics
        let names = assetNames
        let discovery = discovery
        let (previous, tagOffset) = calibrationBasis
        let current = engine.perform(timeout: .seconds(1)) {
            engine, _ -> (([RetainedState.Message], AutoCalibration?), [Event]) in
            let lost = engine.tracker?.lostAssetIDs ?? []
            let tags = engine.tracker?.tagStates ?? []
            let assets = (engine.tracker?.fixes ?? []).enumerated().map { i, a in
                RetainedState.Asset(
                    id: a.id, name: names[a.id], fix: a.fix, lastHeard: a.lastHeard, lost: lost.contains(a.id),
                    telemetry: i < tags.count && tags[i].asset == a.id ? tags[i].telemetry : nil)
            }
            let regions = engine.clientIDs.flatMap { engine.regionStatuses(client: $0) }
            let messages = RetainedState.messages(
                topics: topics, assets: assets, regions: regions, zones: engine.tracker?.zoneIDs ?? [],
                discovery: discovery)
            return ((messages, engine.calibration), [])
        }
        guard var (current, calibration) = current else { return }
        // Fitted off the engine's thread: it costs the cube of the receivers.
        if let c = calibration.take(),
            let m = RetainedState.calibration(
                topics: topics, c, fits: c.fit(previous: previous, tagOffset: tagOffset), tagOffset: tagOffset)
        {
            current.append(m)
        }
        let plan = retained.withLock { $0.plan(current, at: now) }
        for message in plan {
            let sent = client.publish(
                MQTTClient.Message(topic: message.topic, text: message.payload, qos: message.qos, retain: true))
            if sent == nil {
                retained.withLock { $0.resend() }
                return
            }
        }
    }

    /// `<discovery_prefix>/status` (`online`: Home Assistant started, and has forgotten every
    /// entity's config) and retained configs found under `<discovery_prefix>/device_tracker/`
    /// and `<discovery_prefix>/sensor/` (an asset's battery).
    func homeAssistantMessage(topic: String, payload: UnsafeRawBufferPointer, retained isRetained: Bool) {
        guard let discovery, topic.hasPrefix(discovery.prefix + "/") else { return }
        let text = String(decoding: payload, as: UTF8.self)
        if topic == discovery.prefix + "/status" {
            guard text == "online" else { return }
            retained.withLock { $0.resend { $0.hasPrefix(discovery.prefix + "/") } }
            // Logged once every ten minutes at most: 5,000 `online`s (a restart loop, or any
            // client on the topic) wrote 5,000 lines on every gateway.
            guard warnings.due("home assistant online", at: clock()) else { return }
            logger.info(
                "site.home_assistant_online",
                metadata: ["next": gate.isLocator ? "sending the discovery configs again" : "the locator sends them"])
        } else {
            retained.withLock { _ = $0.contradicted(topic, text) }
            if isRetained, !payload.isEmpty, discovery.madeHere(text) { retained.withLock { $0.found(topic) } }
        }
    }
}

extension SiteLink {
    /// Whether `statePeriod` has passed since the last look (and records this one).
    fileprivate func stateDue(at now: Timestamp) -> Bool {
        counters.withLock { c in
            if let last = c.lastStateLook, now - last < Self.statePeriod, now >= last { return false }
            c.lastStateLook = now
            return true
        }
    }
}
