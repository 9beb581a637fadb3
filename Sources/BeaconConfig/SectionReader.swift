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
    /// `alarms[].confirm`: past a minute an alert is news no longer (SPEC §10).
    static let maxConfirm = TimeSpan.seconds(60)

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
        if let n = root["simulation"] { config.simulation = readSimulation(n, assets: assetIDs) }
        if let n = root["site"] { config.site = readSite(n, gateway: config.gateway.id, receivers: config.receivers) }
        if let n = root["calibration"] { readCalibration(n, &config.calibration, receivers: config.receivers) }
        if let n = root["tags"] { readTags(n, &config.tags) }
        if let n = root["analytics"] { readAnalytics(n, &config.analytics) }
        if let n = root["engine"] { readEngine(n, &config.engine) }
        if let n = root["esphome"] {
            config.esphome = readESPHome(n, receivers: config.receivers, inSite: config.site != nil)
        }
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
        read(
            node, "gateway",
            [
                .identifier("id", \.id), .choice("log_level", \.logLevel),
                .init("state_dir") { r, n, p, g in if let v = r.absolutePath(n, p) { g.stateDir = v } },
            ], into: &g)
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
        read(
            node, "bluetooth",
            [
                .init("adapters") { r, n, p, b in
                    guard let items = r.reader.sequence(n, p) else { return }
                    b.adapters = items.enumerated().compactMap { i, item in r.reader.identifier(item, "\(p)[\(i)]") }
                },
                .choice("scan", \.scan), .int("min_rssi", -127...20, \.minRSSI),
                .duration("silence_restart", .seconds(1)...(.hours(1)), \.silenceRestart),
                .duration("device_ttl", .seconds(1)...(.hours(24)), \.deviceTTL),
            ], into: &b)
    }

    func readMonitoring(_ node: Node, _ m: inout MonitoringSettings) {
        read(
            node, "monitoring",
            [
                .int("region_limit", 1...1000, \.regionLimit), .int("enter_sightings", 1...100, \.enterSightings),
                .duration("enter_window", .milliseconds(1)...(.hours(1)), \.enterWindow),
                .duration("exit_timeout", .seconds(1)...(.hours(24)), \.exitTimeout),
                .int("min_rssi", -127...20, \.minRSSI), .int("hysteresis_db", 0...50, \.hysteresisDB),
                .duration("ranging_interval", .milliseconds(100)...(.hours(1)), \.rangingInterval),
            ], into: &m)
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
        var floorImage: FloorImage?
        read(
            node, "positioning",
            [
                .duration("publish_interval", .milliseconds(100)...(.hours(1)), \.publishInterval),
                .int("max_receivers", 1...50, \.maxReceivers), .number("max_speed", 0.01...100, \.maxSpeed),
                .number("min_move", 0...100, \.minMove), .number("tag_height", -100...1000, \.tagHeight),
                .number("zone_hysteresis", 0...20, \.zoneHysteresis),
                .init("floor") { r, n, path, p in
                    if let points = r.readPolygon(n, path) { p.floor = points.map { Point(x: $0[0], y: $0[1]) } }
                },
                .choice("estimator", \.estimator), .choice("motion", \.motion),
                .number("body_loss_db", 0...30, \.bodyLossDB),
                .init("hold_still") { r, n, path, p in if let v = r.reader.bool(n, path) { p.holdStill = v } },
                .init("floor_image") { r, n, path, _ in floorImage = r.readFloorImage(n, path) },
            ], into: &p)
        if let floorImage { image = floorImage }
    }

    func readAPI(_ node: Node, _ a: inout APISettings) {
        read(
            node, "api",
            [
                .init("socket") { r, n, p, a in
                    guard let v = r.absolutePath(n, p) else { return }
                    // sun_path holds 108 bytes with its terminating NUL; a longer path passed the
                    // check and then stopped the daemon at every start (exit 69, restarted by systemd).
                    guard v.utf8.count <= 107 else {
                        return r.reader.fail(n, p, "a Unix socket path may be at most 107 bytes, got \(v.utf8.count)")
                    }
                    a.socket = v
                },
                .identifier("admin_group", \.adminGroup),
            ], into: &a)
    }
}
