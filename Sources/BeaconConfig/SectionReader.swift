import BeaconCore

/// Reads each top-level section of `beacond.yaml` into `Config`, with the ranges and
/// cross-references SPEC §2 promises. Each key's type and default is documented on the
/// `Config` field it fills; the limits live here, next to the check.
struct SectionReader {
    let reader: NodeReader
    let fileReadable: (String) -> String?
    let secretText: (String) -> String?
    /// A file's first bytes (what kind of file it is).
    var fileHead: (String) -> FileHead = { _ in .unchecked }

    /// Longest dwell alert: beyond 2 h an alert says more about a forgotten beacon than a visit.
    static let maxDwell = TimeSpan.hours(2)

    mutating func read(_ root: Fields, into config: inout Config) {
        if let n = root["gateway"] { readGateway(n, &config.gateway) }
        if let n = root["bluetooth"] { readBluetooth(n, &config.bluetooth) }
        if let n = root["monitoring"] { readMonitoring(n, &config.monitoring) }
        if let n = root["clients"] { config.clients = readClients(n, limit: config.monitoring.regionLimit) }
        // References are checked against every id that was written, even on an entry with other
        // mistakes, so one bad receiver does not also fail every zone that names it.
        var receiverIDs: Set<String> = []
        var assetIDs: Set<String> = []
        var zoneIDs: Set<String> = []
        if let n = root["receivers"] {
            config.receivers = readReceivers(n, ids: &receiverIDs)
            checkReceiverAdapters(config.receivers, n)
        }
        if let n = root["assets"] { config.assets = readAssets(n, ids: &assetIDs) }
        // Before the zones: each zone is checked against the floor and the receivers' levels.
        if let n = root["positioning"] { readPositioning(n, &config.positioning, image: &config.floorImage) }
        if let n = root["zones"] {
            config.zones = readZones(
                n, receivers: receiverIDs, ids: &zoneIDs,
                site: (
                    floor: config.positioning.floor,
                    // Only when every receiver was read: a broken one's level is not known.
                    levels: config.receivers.count == receiverIDs.count ? Set(config.receivers.map(\.level)) : []
                ))
        }
        if let n = root["alarms"] { config.alarms = readAlarms(n, zones: zoneIDs, assets: assetIDs) }
        if let n = root["api"] { readAPI(n, &config.api) }
        if let n = root["webhooks"] { config.webhooks = readWebhooks(n) }
        if let n = root["history"] { readHistory(n, &config.history) }
        if let n = root["http"] { config.http = readHTTP(n) }
        if let n = root["simulation"] { config.simulation = readSimulation(n) }
        if let n = root["site"] { config.site = readSite(n, gateway: config.gateway.id) }
        if let n = root["calibration"] { readCalibration(n, &config.calibration, receivers: config.receivers) }
    }

    /// Calls `body` with the node of `key` when the key is present and not null.
    func with(_ f: Fields, _ key: String, _ body: (Node, String) -> Void) {
        guard let n = f[key], !reader.isNull(n) else { return }
        body(n, f.path(key))
    }

    /// The node of a key that must be present, or a "missing key" error at the mapping.
    func required(_ f: Fields, _ key: String, in node: Node) -> Node? {
        guard let n = f[key], !reader.isNull(n) else {
            reader.fail(node, f.path, "missing key \"\(key)\"")
            return nil
        }
        return n
    }

    /// Reports ids used twice in one list, at the second use.
    func checkUnique(_ ids: [(String, Node)], _ path: (Int) -> String) {
        var seen: [String: Int] = [:]
        for (i, (id, node)) in ids.enumerated() {
            if let first = seen[id] {
                reader.fail(node, path(i), "duplicate id \"\(id)\" (also at \(path(first)))")
            } else {
                seen[id] = i
            }
        }
    }

    func readGateway(_ node: Node, _ g: inout GatewaySettings) {
        guard let f = reader.mapping(node, "gateway", allowed: ["id", "state_dir", "log_level"]) else { return }
        with(f, "log_level") { n, p in
            if let v = reader.oneOf(n, p, ["error", "warning", "notice", "info", "debug"]) { g.logLevel = v }
        }
        with(f, "id") { n, p in if let v = reader.identifier(n, p) { g.id = v } }
        with(f, "state_dir") { n, p in if let v = absolutePath(n, p) { g.stateDir = v } }
    }

    func absolutePath(_ node: Node, _ path: String) -> String? {
        guard let s = reader.string(node, path) else { return nil }
        guard s.hasPrefix("/") else {
            reader.fail(node, path, "expected an absolute path like \"/var/lib/beacond\", got \"\(s)\"")
            return nil
        }
        return s
    }

    func readBluetooth(_ node: Node, _ b: inout BluetoothSettings) {
        guard
            let f = reader.mapping(
                node, "bluetooth", allowed: ["adapters", "scan", "min_rssi", "silence_restart", "device_ttl"])
        else {
            return
        }
        with(f, "adapters") { n, p in
            guard let items = reader.sequence(n, p) else { return }
            b.adapters = items.enumerated().compactMap { i, item in reader.identifier(item, "\(p)[\(i)]") }
        }
        with(f, "scan") { n, p in
            if let v = reader.oneOf(n, p, ["active", "passive"]) { b.scan = BluetoothSettings.ScanMode(rawValue: v)! }
        }
        with(f, "min_rssi") { n, p in if let v = reader.int(n, p, -127...20) { b.minRSSI = v } }
        with(f, "silence_restart") { n, p in
            if let v = reader.duration(n, p, min: .seconds(1), max: .hours(1)) { b.silenceRestart = v }
        }
        with(f, "device_ttl") { n, p in
            if let v = reader.duration(n, p, min: .seconds(1), max: .hours(24)) { b.deviceTTL = v }
        }
    }

    func readMonitoring(_ node: Node, _ m: inout MonitoringSettings) {
        let keys = [
            "region_limit", "enter_sightings", "enter_window", "exit_timeout", "min_rssi", "hysteresis_db",
            "ranging_interval",
        ]
        guard let f = reader.mapping(node, "monitoring", allowed: keys) else { return }
        with(f, "region_limit") { n, p in if let v = reader.int(n, p, 1...1000) { m.regionLimit = v } }
        with(f, "enter_sightings") { n, p in if let v = reader.int(n, p, 1...100) { m.enterSightings = v } }
        with(f, "enter_window") { n, p in
            if let v = reader.duration(n, p, min: .milliseconds(1), max: .hours(1)) { m.enterWindow = v }
        }
        with(f, "exit_timeout") { n, p in
            if let v = reader.duration(n, p, min: .seconds(1), max: .hours(24)) { m.exitTimeout = v }
        }
        with(f, "min_rssi") { n, p in if let v = reader.int(n, p, -127...20) { m.minRSSI = v } }
        with(f, "hysteresis_db") { n, p in if let v = reader.int(n, p, 0...50) { m.hysteresisDB = v } }
        with(f, "ranging_interval") { n, p in
            if let v = reader.duration(n, p, min: .milliseconds(100), max: .hours(1)) { m.rangingInterval = v }
        }
    }

    func readClients(_ node: Node, limit: Int) -> [ClientSpec] {
        var clientIDs: Set<String> = []
        return entries(node, "clients", allowed: ["id", "regions"], ids: &clientIDs) { f, id, _ in
            guard let regionsNode = f["regions"] else { return ClientSpec(id: id, regions: []) }
            var regionIDs: Set<String> = []
            let regions = entries(regionsNode, f.path("regions"), allowed: RegionSpec.jsonKeys, ids: &regionIDs) {
                region, regionID, item in readRegion(region, id: regionID, item)
            }
            if case let .sequence(list) = regionsNode, list.count > limit {
                reader.fail(
                    regionsNode, f.path("regions"),
                    "\(list.count) regions, over monitoring.region_limit (\(limit)); a client may monitor at most \(limit)"
                )
            }
            return ClientSpec(id: id, regions: regions)
        }
    }

    /// Reads a list whose entries each have a unique `id`: checks the list, each entry's
    /// keys, its id and the id's uniqueness, then lets `body` read the rest. Every id
    /// written goes into `ids`, even on an entry `body` rejects, for reference checks.
    func entries<T>(
        _ node: Node, _ path: String, allowed: [String], ids written: inout Set<String>,
        _ body: (_ fields: Fields, _ id: String, _ node: Node) -> T?
    ) -> [T] {
        guard let items = reader.sequence(node, path) else { return [] }
        var out: [T] = []
        var ids: [(String, Node)] = []
        for (i, item) in items.enumerated() {
            guard let f = reader.mapping(item, "\(path)[\(i)]", allowed: allowed),
                let idNode = required(f, "id", in: item), let id = reader.identifier(idNode, f.path("id"))
            else { continue }
            ids.append((id, idNode))
            written.insert(id)
            if let value = body(f, id, item) { out.append(value) }
        }
        checkUnique(ids) { "\(path)[\($0)].id" }
        return out
    }

    func readRegion(_ f: Fields, id: String, _ node: Node) -> RegionSpec? {
        let uuid = required(f, "uuid", in: node).flatMap { reader.uuid($0, f.path("uuid")) }
        var spec = RegionSpec(id: id, uuid: uuid ?? BeaconUUID(high: 0, low: 0))
        var ok = uuid != nil
        with(f, "major") { n, p in
            if let v = reader.int(n, p, 0...65535) { spec.major = UInt16(v) } else { ok = false }
        }
        with(f, "minor") { n, p in
            guard let v = reader.int(n, p, 0...65535) else {
                ok = false
                return
            }
            if f["major"] == nil || reader.isNull(f["major"]!) {
                reader.fail(n, p, "needs major (minor alone cannot match)")
                ok = false
            }
            spec.minor = UInt16(v)
        }
        with(f, "notify_on_entry") { n, p in if let v = reader.bool(n, p) { spec.notifyOnEntry = v } else { ok = false }
        }
        with(f, "notify_on_exit") { n, p in if let v = reader.bool(n, p) { spec.notifyOnExit = v } else { ok = false } }
        with(f, "ranging") { n, p in if let v = reader.bool(n, p) { spec.ranging = v } else { ok = false } }
        with(f, "dwell") { n, p in
            guard let items = reader.sequence(n, p) else {
                ok = false
                return
            }
            var dwell: [TimeSpan] = []
            for (i, item) in items.enumerated() {
                if let d = reader.duration(item, "\(p)[\(i)]", min: .seconds(1), max: SectionReader.maxDwell) {
                    dwell.append(d)
                } else {
                    ok = false
                }
            }
            spec.dwell = Array(Set(dwell)).sorted()
        }
        guard ok else { return nil }
        return spec
    }

    func readPositioning(_ node: Node, _ p: inout PositioningSettings, image: inout FloorImage?) {
        let keys = [
            "publish_interval", "max_receivers", "max_speed", "min_move", "tag_height", "zone_hysteresis", "floor",
            "estimator", "motion", "body_loss_db", "floor_image",
        ]
        guard let f = reader.mapping(node, "positioning", allowed: keys) else { return }
        with(f, "floor_image") { n, path in image = readFloorImage(n, path) }
        with(f, "publish_interval") { n, path in
            if let v = reader.duration(n, path, min: .milliseconds(100), max: .hours(1)) { p.publishInterval = v }
        }
        with(f, "max_receivers") { n, path in if let v = reader.int(n, path, 1...50) { p.maxReceivers = v } }
        with(f, "max_speed") { n, path in if let v = reader.double(n, path, 0.01...100) { p.maxSpeed = v } }
        with(f, "min_move") { n, path in if let v = reader.double(n, path, 0...100) { p.minMove = v } }
        with(f, "tag_height") { n, path in if let v = reader.double(n, path, -100...1000) { p.tagHeight = v } }
        with(f, "zone_hysteresis") { n, path in if let v = reader.double(n, path, 0...20) { p.zoneHysteresis = v } }
        with(f, "floor") { n, path in
            if let points = readPolygon(n, path) { p.floor = points.map { Point(x: $0[0], y: $0[1]) } }
        }
        with(f, "estimator") { n, path in
            if let v = reader.oneOf(n, path, PositioningSettings.Estimator.allCases.map(\.rawValue)) {
                p.estimator = PositioningSettings.Estimator(rawValue: v)!
            }
        }
        with(f, "body_loss_db") { n, path in if let v = reader.double(n, path, 0...30) { p.bodyLossDB = v } }
        with(f, "motion") { n, path in
            if let v = reader.oneOf(n, path, PositioningSettings.Motion.allCases.map(\.rawValue)) {
                p.motion = PositioningSettings.Motion(rawValue: v)!
            }
        }
    }

    func readAPI(_ node: Node, _ a: inout APISettings) {
        guard let f = reader.mapping(node, "api", allowed: ["socket", "admin_group"]) else { return }
        with(f, "socket") { n, p in
            guard let v = absolutePath(n, p) else { return }
            // sun_path holds 108 bytes with its terminating NUL; a longer path passed the check
            // and then stopped the daemon at every start (exit 69, restarted by systemd).
            guard v.utf8.count <= 107 else {
                return reader.fail(n, p, "a Unix socket path may be at most 107 bytes, got \(v.utf8.count)")
            }
            a.socket = v
        }
        with(f, "admin_group") { n, p in if let v = reader.identifier(n, p) { a.adminGroup = v } }
    }
}
