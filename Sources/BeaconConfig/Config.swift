import BeaconCore

/// The validated contents of `beacond.yaml` (SPEC §2). Every section has defaults, so a
/// file with only `gateway:` is valid. Built only by `ConfigLoader`, which has checked every
/// value, id and reference; code that receives a `Config` need not re-check.
public struct Config: Sendable, Equatable {
    public var gateway = GatewaySettings()
    public var bluetooth = BluetoothSettings()
    public var monitoring = MonitoringSettings()
    public var clients: [ClientSpec] = []
    public var receivers: [ReceiverSpec] = []
    public var assets: [AssetSpec] = []
    public var zones: [ZoneSpec] = []
    public var alarms: [AlarmSpec] = []
    public var positioning = PositioningSettings()
    public var api = APISettings()
    public var webhooks: [WebhookSpec] = []
    /// Extension: what the event history keeps of alerts and of telemetry.
    public var history = HistoryRetention()
    /// Extension: the read-only TCP listener; nil when absent (off).
    public var http: HTTPListenSettings?
    /// Extension `positioning.floor_image`: a plan drawn under the floor view.
    public var floorImage: FloorImage?
    /// Extension: the simulated site for `beacond simulate` and `--simulate`; nil when absent.
    public var simulation: SimulationSettings?
    /// `site:` (SPEC §6): the gateways of one store meeting on an MQTT broker; nil for a
    /// gateway on its own.
    public var site: SiteSettings?
    /// Extension: the gateways advertise as calibration beacons (`beaconctl calibrate --auto`).
    public var calibration = CalibrationSettings()
    /// `tags:` (SPEC §7.3): when a tag's battery is low and when it is missing.
    public var tags = TagRules()
    /// `analytics:` (SPEC §8): how long the zone roll-ups and heat map are kept.
    public var analytics = AnalyticsSettings()
    /// `esphome:` (SPEC §9): ESPHome Bluetooth proxies as receivers.
    public var esphome: [ESPHomeProxySpec] = []
    /// `engine:` (an extension): the threads the engine's per-asset work runs on.
    public var engine = EngineSettings()

    public init() {}

    /// The part of the configuration the engine runs on.
    public var engineConfiguration: EngineConfiguration {
        EngineConfiguration(
            monitoring: monitoring, clients: clients,
            receivers: Dictionary(
                receivers.map {
                    ($0.id, ReceiverCalibration(rssiAt1m: $0.rssiAt1m, pathLossExponent: $0.pathLossExponent))
                }, uniquingKeysWith: { a, _ in a }),
            site: siteModel)
    }

    /// The receivers that are this gateway's adapters: those it names (or that name no
    /// gateway), less those fed by another system's messages (SPEC §9).
    public var ownReceivers: [ReceiverSpec] {
        let foreign = (site?.foreign.receiverIDs ?? []).union(esphome.map(\.receiver))
        return receivers.filter { $0.belongs(to: gateway.id) && !foreign.contains($0.id) }
    }

    /// The ESPHome proxies this gateway connects to: those whose receiver is its own (names
    /// no gateway, or this one). In a site each names its gateway (checked), so one
    /// connection, one gateway, hears a proxy: its advertisements are not counted twice.
    public var ownESPHomeProxies: [ESPHomeProxySpec] {
        let own = Set(receivers.filter { $0.belongs(to: gateway.id) }.map(\.id))
        return esphome.filter { own.contains($0.receiver) }
    }

    /// Receivers with positions, assets, zones and alarms, as the engine's tracker takes them.
    public var siteModel: SiteConfiguration {
        SiteConfiguration(
            receivers: receivers.map {
                SiteReceiver(id: $0.id, position: Point(x: $0.x, y: $0.y), level: $0.level, z: $0.z)
            },
            assets: assets.map { asset in
                let tag: AssetTag
                switch asset.beacon {
                case let .ibeacon(uuid, major, minor): tag = .ibeacon(uuid: uuid, major: major, minor: minor)
                case let .eddystone(namespace, instance):
                    tag = .eddystone(namespace: namespace.lowercased(), instance: instance.lowercased())
                case let .address(address): tag = .address(address.uppercased())
                case let .irk(key): tag = .irk(key)
                }
                return AssetDefinition(id: asset.id, tag: tag, missingAfter: asset.missingAfter)
            },
            zones: zones.map { zone in
                switch zone.shape {
                case let .polygon(level, points):
                    return ZoneDefinition(
                        id: zone.id, shape: .polygon(level: level, points: points.map { Point(x: $0[0], y: $0[1]) }))
                case let .nearReceiver(receiver, within):
                    return ZoneDefinition(id: zone.id, shape: .nearReceiver(receiver: receiver, within: within))
                }
            },
            alarms: alarms.map { alarm in
                AlarmDefinition(
                    id: alarm.id, zones: alarm.zones,
                    on: Set(alarm.on.map { AlarmDefinition.Condition(rawValue: $0.rawValue)! }), dwell: alarm.dwell,
                    assets: alarm.assets.map(Set.init), active: alarm.active, confirm: alarm.confirm)
            },
            positioning: positioning, calibrationUUID: calibration.uuid, tags: tags, visits: analytics.visits)
    }
}

/// `gateway:`.
public struct GatewaySettings: Sendable, Equatable {
    /// Used in every event's `source` (`beacond://<id>`). Default: the host name.
    public var id = "beacond"
    /// SQLite state, outbox and event history. Default `/var/lib/beacond`.
    public var stateDir = "/var/lib/beacond"
    /// Extension: the lowest level logged; `--log-level` overrides it. Nothing is logged per
    /// advertisement at any level above debug.
    public var logLevel = LogLevel.info
}

/// `gateway.log_level`: the journal's priorities beacond logs at, most severe first.
public enum LogLevel: String, Sendable, CaseIterable {
    case error, warning, notice, info, debug
}

/// `bluetooth:`.
public struct BluetoothSettings: Sendable, Equatable {
    public enum ScanMode: String, Sendable, CaseIterable { case active, passive }
    /// Adapters to scan with; nil means every adapter BlueZ has.
    public var adapters: [String]? = nil
    public var scan = ScanMode.active
    /// Passed to BlueZ's discovery filter. Default -100 dBm.
    public var minRSSI = -100
    /// No advertisement for this long while discovering: discovery is restarted; still none
    /// three times as long: the adapter is power-cycled. Default 60 s (beacond's extension).
    public var silenceRestart = TimeSpan.seconds(60)
    /// Devices discovery created and not heard this long are removed from BlueZ's cache.
    /// Default 2 min (beacond's extension).
    public var deviceTTL = TimeSpan.minutes(2)
}

/// `receivers[]`: radios with known positions, for asset positions and calibrated distance.
public struct ReceiverSpec: Sendable, Equatable {
    public var id: String
    public var x: Double
    public var y: Double
    public var level: Int
    public var rssiAt1m: Double?
    /// Mounting height in metres (extension): with `positioning.tag_height`, ranges are
    /// corrected for the height difference before the 2-D fix.
    public var z: Double?
    public var pathLossExponent = 2.0
    /// The gateway whose adapter this receiver is (SPEC §6.1); nil: every gateway's own.
    public var gateway: String?
    /// That gateway's adapter; nil: the receiver's id.
    public var adapter: String?

    /// Whether this receiver is the adapter of gateway `id`.
    public func belongs(to id: String) -> Bool { gateway == nil || gateway == id }
}

/// `assets[]`: what an asset's tag is, by beacon identity or radio address.
public struct AssetSpec: Sendable, Equatable {
    public enum Tag: Sendable, Equatable {
        case ibeacon(uuid: BeaconUUID, major: UInt16?, minor: UInt16?)
        case eddystone(namespace: String, instance: String)
        case address(String)
        case irk(IdentityResolvingKey)
    }
    public var id: String
    public var name: String?
    public var beacon: Tag
    /// `missing_after` for this asset (SPEC §7.3), over `tags.missing_after`.
    public var missingAfter: TimeSpan?

    public init(id: String, name: String?, beacon: Tag) {
        self.id = id
        self.name = name
        self.beacon = beacon
    }
}

/// `zones[]`: a polygon on a level, or "within N metres of a receiver".
public struct ZoneSpec: Sendable, Equatable {
    public enum Shape: Sendable, Equatable {
        case polygon(level: Int, points: [[Double]])
        case nearReceiver(receiver: String, within: Double)
    }
    public var id: String
    public var shape: Shape
}

/// `alarms[]`: which zone conditions raise `zone.*` events, for which assets.
public struct AlarmSpec: Sendable, Equatable {
    public enum Condition: String, Sendable, CaseIterable { case enter, exit, dwell }
    public var id: String
    public var zones: [String]
    public var on: [Condition]
    public var dwell: TimeSpan?
    /// nil means every asset.
    public var assets: [String]?
    public var active = true
    /// `confirm`: how long a crossing is weighed before its enter or exit is told (SPEC §10).
    public var confirm = AlarmDefinition.defaultConfirm
}

/// `api:`.
public struct APISettings: Sendable, Equatable {
    public var socket = "/run/beacond/api.sock"
    /// Mutating requests are allowed to root and to this group.
    public var adminGroup = "beacond-admin"
}

/// `webhooks[]`.
public struct WebhookSpec: Sendable, Equatable {
    public var id: String
    public var url: String
    /// Event type globs, like `region.*`. Default: every event but `ranging`.
    public var events: [String] = ["region.*", "beacon.*", "asset.*", "zone.*", "adapter.*"]
    public var secretFile: String?
    /// How deliveries are signed when there is a secret.
    public var signature = WebhookSignature.beacond
    public var batchMaxEvents = 50
    public var batchMaxDelay = TimeSpan.seconds(1)
    public var timeout = TimeSpan.seconds(5)
    public var maxAge = TimeSpan.hours(24)
}
