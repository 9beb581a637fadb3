import BeaconCore

/// Receivers, assets, zones, alarms and webhooks: the sections that describe the site.
extension SectionReader {
    func readReceivers(_ node: Node, ids written: inout Set<String>) -> [ReceiverSpec] {
        return entries(
            node, "receivers", allowed: ["id", "position", "rssi_at_1m", "path_loss_exponent", "gateway", "adapter"],
            ids: &written
        ) { f, id, item in
            var r = ReceiverSpec(id: id, x: 0, y: 0, level: 0)
            if let posNode = required(f, "position", in: item),
                let pos = reader.mapping(posNode, f.path("position"), allowed: ["x", "y", "z", "level"])
            {
                if let n = required(pos, "x", in: posNode), let v = reader.double(n, pos.path("x"), -1e6...1e6) {
                    r.x = v
                }
                if let n = required(pos, "y", in: posNode), let v = reader.double(n, pos.path("y"), -1e6...1e6) {
                    r.y = v
                }
                with(pos, "level") { n, p in if let v = reader.int(n, p, -100...200) { r.level = v } }
                with(pos, "z") { n, p in if let v = reader.double(n, p, -100...1000) { r.z = v } }
            }
            with(f, "rssi_at_1m") { n, p in if let v = reader.double(n, p, -127...20) { r.rssiAt1m = v } }
            with(f, "gateway") { n, p in r.gateway = reader.identifier(n, p) }
            with(f, "adapter") { n, p in r.adapter = reader.identifier(n, p) }
            with(f, "path_loss_exponent") { n, p in if let v = reader.double(n, p, 1.0...6.0) { r.pathLossExponent = v }
            }
            return r
        }
    }

    func readAssets(_ node: Node, ids written: inout Set<String>) -> [AssetSpec] {
        return entries(node, "assets", allowed: ["id", "name", "beacon"], ids: &written) { f, id, item in
            var name: String?
            with(f, "name") { n, p in name = reader.string(n, p) }
            guard let beaconNode = required(f, "beacon", in: item), let tag = readTag(beaconNode, f.path("beacon"))
            else { return nil }
            return AssetSpec(id: id, name: name, beacon: tag)
        }
    }

    private func readTag(_ node: Node, _ path: String) -> AssetSpec.Tag? {
        let keys = ["uuid", "major", "minor", "namespace", "instance", "address"]
        guard let f = reader.mapping(node, path, allowed: keys) else { return nil }
        let given = keys.filter { f[$0] != nil }
        if given.contains("address") {
            guard given == ["address"] else {
                reader.fail(node, path, "give either uuid/major/minor, namespace/instance or address, not a mix")
                return nil
            }
            guard let s = reader.string(f["address"]!, f.path("address")) else { return nil }
            guard Self.isMACAddress(s) else {
                reader.fail(
                    f["address"]!, f.path("address"), "expected an address like \"AA:BB:CC:DD:EE:FF\", got \"\(s)\"")
                return nil
            }
            return .address(s.uppercased())
        }
        if given.contains("namespace") || given.contains("instance") {
            guard Set(given) == ["namespace", "instance"] else {
                reader.fail(node, path, "an Eddystone tag needs namespace and instance, and nothing else")
                return nil
            }
            let ns = hex(f["namespace"]!, f.path("namespace"), bytes: 10)
            let inst = hex(f["instance"]!, f.path("instance"), bytes: 6)
            guard let ns, let inst else { return nil }
            return .eddystone(namespace: ns, instance: inst)
        }
        guard let uuidNode = required(f, "uuid", in: node), let uuid = reader.uuid(uuidNode, f.path("uuid")) else {
            return nil
        }
        var major: UInt16?
        var minor: UInt16?
        with(f, "major") { n, p in major = reader.int(n, p, 0...65535).map(UInt16.init) }
        with(f, "minor") { n, p in
            minor = reader.int(n, p, 0...65535).map(UInt16.init)
            if f["major"] == nil { reader.fail(n, p, "needs major (minor alone cannot match)") }
        }
        return .ibeacon(uuid: uuid, major: major, minor: minor)
    }

    private func hex(_ node: Node, _ path: String, bytes: Int) -> String? {
        guard let s = reader.string(node, path) else { return nil }
        guard s.utf8.count == bytes * 2, Hex.decode(s) != nil else {
            reader.fail(node, path, "expected \(bytes * 2) hex digits, got \"\(s)\"")
            return nil
        }
        return s.lowercased()
    }

    static func isMACAddress(_ s: String) -> Bool {
        let parts = s.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.utf8.count == 2 && Hex.decode(String($0)) != nil }
    }

    /// `site`: the floor's outline, if given, and the levels receivers are on, if any: a zone
    /// wholly off the floor or on a level no receiver is on can never be entered, which is a
    /// mistake in the file, not a zone to run for months with no alert.
    func readZones(
        _ node: Node, receivers: Set<String>, ids written: inout Set<String>,
        site: (floor: [Point]?, levels: Set<Int>) = (nil, [])
    ) -> [ZoneSpec] {
        return entries(node, "zones", allowed: ["id", "level", "polygon", "receiver", "within"], ids: &written) {
            f, id, item in
            let path = f.path
            if let polygonNode = f["polygon"] {
                guard f["receiver"] == nil, f["within"] == nil else {
                    reader.fail(item, path, "a zone is either a polygon or receiver + within, not both")
                    return nil
                }
                var level: Int? = 0
                with(f, "level") { n, p in level = reader.int(n, p, -100...200) }
                if let level, !site.levels.isEmpty, !site.levels.contains(level) {
                    reader.fail(
                        f["level"] ?? item, f["level"] == nil ? path : f.path("level"),
                        "no receiver is on level \(level) (receivers are on "
                            + "\(site.levels.sorted().map(String.init).joined(separator: ", "))): "
                            + "no asset is ever placed in this zone")
                }
                guard let points = readPolygon(polygonNode, f.path("polygon")) else { return nil }
                if let floor = site.floor, !Polygon(floor).overlaps(Polygon(points.map { Point(x: $0[0], y: $0[1]) })) {
                    reader.fail(
                        polygonNode, f.path("polygon"),
                        "lies wholly outside positioning.floor, where positions are placed: "
                            + "no asset is ever in this zone")
                    return nil
                }
                return ZoneSpec(id: id, shape: .polygon(level: level ?? 0, points: points))
            }
            guard let receiverNode = required(f, "receiver", in: item) else { return nil }
            guard let receiver = reader.identifier(receiverNode, f.path("receiver")) else { return nil }
            guard receivers.contains(receiver) else {
                reader.fail(receiverNode, f.path("receiver"), "unknown receiver \"\(receiver)\" (not in receivers)")
                return nil
            }
            guard let withinNode = required(f, "within", in: item),
                let within = reader.double(withinNode, f.path("within"), 0.1...100)
            else { return nil }
            return ZoneSpec(id: id, shape: .nearReceiver(receiver: receiver, within: within))
        }
    }

    /// The most corners an outline may have (each is checked against every other edge).
    static let maxPolygonPoints = 1_000

    func readPolygon(_ node: Node, _ path: String) -> [[Double]]? {
        guard let items = reader.sequence(node, path) else { return nil }
        guard items.count >= 3 else {
            reader.fail(node, path, "a polygon needs at least 3 points, got \(items.count)")
            return nil
        }
        // A room or an aisle has a few corners; thousands are a drawing exported point by point.
        guard items.count <= Self.maxPolygonPoints else {
            reader.fail(node, path, "at most \(Self.maxPolygonPoints) points, got \(items.count): simplify the outline")
            return nil
        }
        var points: [[Double]] = []
        for (i, item) in items.enumerated() {
            guard let pair = reader.sequence(item, "\(path)[\(i)]"), pair.count == 2 else {
                reader.fail(item, "\(path)[\(i)]", "expected a point [x, y] in metres")
                return nil
            }
            guard let x = reader.double(pair[0], "\(path)[\(i)][0]", -1e6...1e6),
                let y = reader.double(pair[1], "\(path)[\(i)][1]", -1e6...1e6)
            else { return nil }
            // A corner given twice in a row, and the first repeated as the last (an outline
            // closed as GeoJSON closes it), say nothing more: taken once.
            if points.last != [x, y] { points.append([x, y]) }
        }
        if points.count > 1 && points.first == points.last { points.removeLast() }
        guard points.count >= 3 else {
            reader.fail(node, path, "a polygon needs at least 3 different points, got \(points.count)")
            return nil
        }
        let outline = Polygon(points.map { Point(x: $0[0], y: $0[1]) })
        if let (i, j) = outline.firstCrossing() {
            let n = points.count
            reader.fail(
                node, path,
                "its edges \(i)→\((i + 1) % n) and \(j)→\((j + 1) % n) cross (corners out of order?): "
                    + "list the corners in order around the outline")
            return nil
        }
        guard outline.area > 1e-6 else {
            reader.fail(node, path, "encloses no area: its points lie on one line")
            return nil
        }
        return points
    }

    func readAlarms(_ node: Node, zones: Set<String>, assets: Set<String>) -> [AlarmSpec] {
        var ids: Set<String> = []
        return entries(node, "alarms", allowed: ["id", "zones", "on", "dwell", "assets", "active"], ids: &ids) {
            f, id, item in
            let path = f.path
            var alarm = AlarmSpec(id: id, zones: [], on: [.enter, .exit])
            if let zonesNode = required(f, "zones", in: item) {
                alarm.zones = references(zonesNode, f.path("zones"), known: zones, kind: "zone", section: "zones")
            }
            with(f, "on") { n, p in
                guard let list = reader.sequence(n, p) else { return }
                alarm.on = list.enumerated().compactMap { j, c in
                    reader.oneOf(c, "\(p)[\(j)]", ["enter", "exit", "dwell"]).flatMap(AlarmSpec.Condition.init)
                }
            }
            with(f, "dwell") { n, p in
                alarm.dwell = reader.duration(n, p, min: .seconds(1), max: SectionReader.maxDwell)
            }
            if alarm.on.contains(.dwell), alarm.dwell == nil, f["dwell"] == nil {
                reader.fail(item, path, "on: [dwell] needs a dwell duration, like dwell: 5m")
            }
            with(f, "assets") { n, p in
                alarm.assets = references(n, p, known: assets, kind: "asset", section: "assets")
            }
            with(f, "active") { n, p in if let v = reader.bool(n, p) { alarm.active = v } }
            return alarm
        }
    }

    private func references(_ node: Node, _ path: String, known: Set<String>, kind: String, section: String) -> [String]
    {
        guard let list = reader.sequence(node, path) else { return [] }
        return list.enumerated().compactMap { j, item in
            guard let ref = reader.identifier(item, "\(path)[\(j)]") else { return nil }
            guard known.contains(ref) else {
                reader.fail(item, "\(path)[\(j)]", "unknown \(kind) \"\(ref)\" (not in \(section))")
                return nil
            }
            return ref
        }
    }

    func readWebhooks(_ node: Node) -> [WebhookSpec] {
        var ids: Set<String> = []
        return entries(
            node, "webhooks",
            allowed: ["id", "url", "events", "secret_file", "signature", "batch", "timeout", "max_age"],
            ids: &ids
        ) { f, id, item in
            guard let urlNode = required(f, "url", in: item), let url = reader.string(urlNode, f.path("url")) else {
                return nil
            }
            guard url.hasPrefix("http://") || url.hasPrefix("https://"), url.utf8.count > 8 else {
                reader.fail(urlNode, f.path("url"), "expected an http:// or https:// URL, got \"\(url)\"")
                return nil
            }
            if let bad = url.unicodeScalars.first(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
                let what =
                    bad == " " ? "a space" : "control character U+\(String(bad.value, radix: 16, uppercase: true))"
                reader.fail(urlNode, f.path("url"), "a URL may not contain \(what) (write a space as %20)")
                return nil
            }
            let authority = url.drop { $0 != "/" }.dropFirst(2).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            guard !authority.isEmpty, !authority.hasPrefix(":"), !authority.hasPrefix("@") else {
                reader.fail(urlNode, f.path("url"), "expected a host after the scheme, got \"\(url)\"")
                return nil
            }
            var hook = WebhookSpec(id: id, url: url)
            with(f, "events") { n, p in
                guard let list = reader.sequence(n, p) else { return }
                hook.events = list.enumerated().compactMap { j, e in reader.string(e, "\(p)[\(j)]") }
            }
            with(f, "secret_file") { n, p in
                guard let file = absolutePath(n, p) else { return }
                if let problem = fileReadable(file) {
                    reader.fail(n, p, "cannot use \"\(file)\": \(problem)")
                }
                hook.secretFile = file
            }
            with(f, "signature") { n, p in
                guard let name = reader.string(n, p) else { return }
                guard let scheme = WebhookSignature(rawValue: name) else {
                    reader.fail(n, p, "expected beacond or standard, got \"\(name)\"")
                    return
                }
                hook.signature = scheme
                guard scheme == .standard else { return }
                guard let file = hook.secretFile else {
                    reader.fail(n, p, "signature: standard needs secret_file, a file holding a whsec_ secret")
                    return
                }
                if let text = secretText(file), case let .failure(problem) = WebhookSignature.standardKey(text) {
                    reader.fail(n, p, "\(file) is not a Standard Webhooks secret: \(problem.message)")
                }
            }
            with(f, "batch") { n, p in
                guard let b = reader.mapping(n, p, allowed: ["max_events", "max_delay"]) else { return }
                with(b, "max_events") { n, p in if let v = reader.int(n, p, 1...1000) { hook.batchMaxEvents = v } }
                with(b, "max_delay") { n, p in
                    if let v = reader.duration(n, p, min: .seconds(0), max: .minutes(5)) { hook.batchMaxDelay = v }
                }
            }
            with(f, "timeout") { n, p in
                if let v = reader.duration(n, p, min: .milliseconds(100), max: .minutes(5)) { hook.timeout = v }
            }
            with(f, "max_age") { n, p in
                if let v = reader.duration(n, p, min: .seconds(1), max: .hours(24 * 30)) { hook.maxAge = v }
            }
            return hook
        }
    }
}
