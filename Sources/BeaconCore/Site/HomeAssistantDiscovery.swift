/// Home Assistant MQTT discovery for a site's assets (SPEC §6.3): one retained config per
/// entity, `<prefix>/device_tracker/<object_id>/config`, the form Home Assistant takes from
/// 2024.1 on. Each asset is a device with one `device_tracker` whose state is the asset's
/// `assets/<asset>/state` (a zone id, `home` or `not_home`) and whose attributes are
/// `assets/<asset>/attributes`.
///
/// Available while any gateway of the site is online (`availability_mode: any` over their
/// status topics): the locator is whichever of them the election chose, and a retained status
/// plus each gateway's last will is what the broker can vouch for without us.
public struct HomeAssistantDiscovery: Sendable, Equatable {
    /// `homeassistant` unless configured.
    public var prefix: String
    public var site: String
    /// Every gateway of the site (the site file's and this one).
    public var gateways: [String]
    public var version: String

    public init(prefix: String, site: String, gateways: [String], version: String) {
        self.prefix = prefix
        self.site = site
        self.gateways = gateways
        self.version = version
    }

    var topics: SiteTopics { SiteTopics(site: site) }

    /// `beacond_<site>_<asset>`, with what Home Assistant does not take in an object id
    /// (anything but letters, digits, `_` and `-`) as `_`.
    public func objectID(asset: String) -> String {
        "beacond_" + Self.safe(site) + "_" + Self.safe(asset)
    }

    public func configTopic(asset: String) -> String {
        "\(prefix)/device_tracker/\(objectID(asset: asset))/config"
    }

    /// The battery sensor's config topic: `<prefix>/sensor/<object_id>_battery/config`.
    public func batteryTopic(asset: String) -> String {
        "\(prefix)/sensor/\(objectID(asset: asset))_battery/config"
    }

    /// The retained config for `asset`'s tracker.
    public func deviceTracker(for asset: RetainedState.Asset) -> RetainedState.Message {
        let id = objectID(asset: asset.id)
        var w = JSONTextWriter()
        w.openObject()
        w.key("name")
        w.null()
        w.member("unique_id", id)
        w.member("object_id", id)
        w.member("state_topic", topics[.asset(id: asset.id, field: "state")])
        w.member("json_attributes_topic", topics[.asset(id: asset.id, field: "attributes")])
        w.member("payload_home", "home")
        w.member("payload_not_home", "not_home")
        w.member("source_type", "bluetooth_le")
        entityTail(&w, id: id, asset: asset)
        return RetainedState.Message(topic: configTopic(asset: asset.id), payload: w.text, qos: 1)
    }

    /// The retained config of `asset`'s battery (SPEC §7.5): a `sensor` with the battery
    /// device class on the asset's device, its state the percentage of
    /// `assets/<asset>/battery` and the voltage among its attributes; a diagnostic entity, as
    /// Home Assistant files a device's battery.
    public func batterySensor(for asset: RetainedState.Asset) -> RetainedState.Message {
        let id = objectID(asset: asset.id) + "_battery"
        let topic = topics[.asset(id: asset.id, field: "battery")]
        var w = JSONTextWriter()
        w.openObject()
        w.member("name", "Battery")
        w.member("unique_id", id)
        w.member("object_id", id)
        w.member("state_topic", topic)
        w.member("value_template", "{{ value_json.percent }}")
        w.member("json_attributes_topic", topic)
        w.member("device_class", "battery")
        w.member("unit_of_measurement", "%")
        w.member("state_class", "measurement")
        w.member("entity_category", "diagnostic")
        entityTail(&w, id: objectID(asset: asset.id), asset: asset)
        return RetainedState.Message(topic: batteryTopic(asset: asset.id), payload: w.text, qos: 1)
    }

    /// A zone's occupancy sensor's object id and config topic:
    /// `<prefix>/sensor/beacond_<site>_zone_<zone>_occupancy/config`.
    public func occupancyID(zone: String) -> String {
        "beacond_" + Self.safe(site) + "_zone_" + Self.safe(zone) + "_occupancy"
    }

    public func occupancyTopic(zone: String) -> String { "\(prefix)/sensor/\(occupancyID(zone: zone))/config" }

    /// The retained config of a zone's occupancy (SPEC §8): a `sensor` measuring how many
    /// assets are in the zone (`zones/<zone>/occupancy`), on one device for the site's zones,
    /// so that Home Assistant's history charts how busy each aisle is.
    public func occupancySensor(zone: String) -> RetainedState.Message {
        let id = occupancyID(zone: zone)
        var w = JSONTextWriter()
        w.openObject()
        w.member("name", "\(zone) occupancy")
        w.member("unique_id", id)
        w.member("object_id", id)
        w.member("state_topic", topics[.zone(id: zone, field: "occupancy")])
        w.member("unit_of_measurement", "assets")
        w.member("state_class", "measurement")
        w.member("icon", "mdi:account-group")
        availability(&w)
        w.key("device")
        w.openObject()
        w.key("identifiers")
        w.openArray()
        w.string("beacond_" + Self.safe(site) + "_zones")
        w.closeArray()
        w.member("name", "\(site) zones")
        w.member("manufacturer", "beacond")
        w.member("model", "Zone analytics")
        w.closeObject()
        origin(&w)
        w.closeObject()
        return RetainedState.Message(topic: occupancyTopic(zone: zone), payload: w.text, qos: 1)
    }

    /// What every entity of an asset ends with: availability while any gateway is online, and
    /// the asset's device (identified as its tracker is, so that both land on one device).
    private func entityTail(_ w: inout JSONTextWriter, id: String, asset: RetainedState.Asset) {
        availability(&w)
        w.key("device")
        w.openObject()
        w.key("identifiers")
        w.openArray()
        w.string(id)
        w.closeArray()
        w.member("name", asset.name ?? asset.id)
        w.member("manufacturer", "beacond")
        w.member("model", "BLE asset tag")
        w.closeObject()
        origin(&w)
        w.closeObject()
    }

    /// Available while any gateway of the site is online.
    private func availability(_ w: inout JSONTextWriter) {
        w.key("availability")
        w.openArray()
        for gateway in gateways {
            w.openObject()
            w.member("topic", topics.status(gateway))
            w.closeObject()
        }
        w.closeArray()
        w.member("availability_mode", "any")
        w.member("payload_available", "online")
        w.member("payload_not_available", "offline")
    }

    private func origin(_ w: inout JSONTextWriter) {
        w.key("origin")
        w.openObject()
        w.member("name", "beacond")
        w.member("sw", version)
        w.closeObject()
    }

    /// Whether a config found retained on the broker was made for this site (its state topic
    /// is one of ours): only those may be cleared when their asset is gone.
    public func madeHere(_ payload: String) -> Bool {
        guard let value = try? JSONParser.parse(payload), let topic = value["state_topic"]?.stringValue else {
            return false
        }
        switch topics.parse(topic) {
        case .asset, .zone: return true
        default: return false
        }
    }

    static func safe(_ s: String) -> String {
        String(
            decoding: s.utf8.map { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F
                    || b == 0x2D ? b : 0x5F
            }, as: UTF8.self)
    }
}
