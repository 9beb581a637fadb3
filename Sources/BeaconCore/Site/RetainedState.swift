/// The site's retained topics (SPEC §6.2): where each asset is and whether each region is
/// occupied, as the broker should hold them for anyone who subscribes later (Home
/// Assistant, a dashboard, a WMS that restarted).
///
/// Made from the engine's state, not from its events: an asset's zone can change without an
/// `asset.position` worth publishing, an asset lost has no event of its own, and a broker that
/// was away, or a locator that just took over, must be able to say the whole truth again.
public enum RetainedState {
    /// One asset as the engine knows it.
    public struct Asset: Sendable, Equatable {
        public var id: String
        public var name: String?
        public var fix: AssetFix?
        public var lastHeard: Timestamp?
        /// Heard once, then not for the tracker's `lost_after`.
        public var lost: Bool
        /// What its tag said of itself: its battery is kept on `assets/<asset>/battery`.
        public var telemetry: TagTelemetry?

        public init(
            id: String, name: String? = nil, fix: AssetFix?, lastHeard: Timestamp?, lost: Bool,
            telemetry: TagTelemetry? = nil
        ) {
            self.id = id
            self.name = name
            self.fix = fix
            self.lastHeard = lastHeard
            self.lost = lost
            self.telemetry = telemetry
        }

        /// `assets/<asset>/state`: the first zone it is in (configuration order), `home` on
        /// site in no zone, `not_home` when never placed or lost.
        public var state: String {
            guard let fix, !lost else { return "not_home" }
            return fix.zones.first ?? "home"
        }
    }

    /// A retained message: its topic, payload and QoS, and what of it counts as a change
    /// (`assets/…/attributes` carries `last_seen`, which moves with every advert; only a
    /// moved position or zone is worth publishing at once).
    public struct Message: Sendable, Equatable {
        public var topic: String
        public var payload: String
        public var qos: Int32
        public var significant: String

        public init(topic: String, payload: String, qos: Int32, significant: String? = nil) {
            self.topic = topic
            self.payload = payload
            self.qos = qos
            self.significant = significant ?? payload
        }
    }

    /// Every retained message of the site's state now, under the site's `topics`.
    /// `zones`: the configured zones, each with its `occupancy` (assets placed in it, not
    /// lost) and, with discovery, an occupancy sensor (SPEC §8).
    public static func messages(
        topics: SiteTopics, assets: [Asset], regions: [RegionStatus], zones: [String] = [],
        discovery: HomeAssistantDiscovery? = nil
    ) -> [Message] {
        var out: [Message] = []
        out.reserveCapacity(assets.count * 3 + regions.count)
        for asset in assets {
            out.append(Message(topic: topics[.asset(id: asset.id, field: "state")], payload: asset.state, qos: 1))
            if let fix = asset.fix {
                let (text, significant) = attributes(fix, lastHeard: asset.lastHeard, lost: asset.lost)
                out.append(
                    Message(
                        topic: topics[.asset(id: asset.id, field: "attributes")], payload: text, qos: 0,
                        significant: significant))
            }
            if let discovery { out.append(discovery.deviceTracker(for: asset)) }
            if let telemetry = asset.telemetry, let percent = telemetry.batteryPercentShown {
                out.append(
                    Message(
                        topic: topics[.asset(id: asset.id, field: "battery")],
                        payload: battery(percent: percent, telemetry), qos: 1,
                        // A change of percent or of 50 mV: not every reading's time.
                        significant: "\(percent) \((telemetry.batteryMillivolts ?? 0) / 50)"))
                if let discovery { out.append(discovery.batterySensor(for: asset)) }
            }
        }
        var occupancy: [String: Int] = [:]
        for asset in assets where !asset.lost {
            for zone in asset.fix?.zones ?? [] { occupancy[zone, default: 0] += 1 }
        }
        for zone in zones {
            out.append(
                Message(topic: topics[.zone(id: zone, field: "occupancy")], payload: "\(occupancy[zone] ?? 0)", qos: 1))
            if let discovery { out.append(discovery.occupancySensor(zone: zone)) }
        }
        for region in regions where region.state != .unknown {
            out.append(
                Message(
                    topic: topics[.regionState(client: region.client, region: region.spec.id)],
                    payload: region.state == .inside ? "inside" : "outside", qos: 1))
        }
        return out
    }

    /// `{percent, millivolts, at}`: `percent` as `TagTelemetry.batteryPercentShown` gives it.
    static func battery(percent: Int, _ t: TagTelemetry) -> String {
        var w = JSONTextWriter()
        w.openObject()
        w.member("percent", Double(percent))
        w.key("millivolts")
        if let mv = t.batteryMillivolts { w.number(Double(mv)) } else { w.null() }
        w.key("at")
        if let at = t.batteryAt { w.string(RFC3339.format(at)) } else { w.null() }
        w.closeObject()
        return w.text
    }

    /// `{x, y, level, accuracy_m, zones, flapping, last_seen}`, and the same without `last_seen`.
    static func attributes(_ fix: AssetFix, lastHeard: Timestamp?, lost: Bool) -> (String, String) {
        var w = JSONTextWriter()
        w.openObject()
        w.member("x", round2(fix.position.x))
        w.member("y", round2(fix.position.y))
        w.member("level", Double(fix.level))
        w.member("accuracy_m", round2(fix.accuracy))
        w.key("zones")
        w.openArray()
        for zone in lost ? [] : fix.zones { w.string(zone) }
        w.closeArray()
        w.key("flapping")
        w.openArray()
        for zone in lost ? [] : fix.flapping { w.string(zone) }
        w.closeArray()
        let significant = w.text + "}"
        w.key("last_seen")
        if let lastHeard { w.string(RFC3339.format(lastHeard)) } else { w.null() }
        w.closeObject()
        return (w.text, significant)
    }

    private static func round2(_ v: Double) -> Double { (v * 100).rounded() / 100 }
}
