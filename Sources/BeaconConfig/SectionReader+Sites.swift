import BeaconCore

/// Receivers, assets, zones, alarms and webhooks: the sections that describe the site.
extension SectionReader {
    func readReceivers(_ node: Node, ids written: inout Set<String>) -> [ReceiverSpec] {
        let position: [ConfigField<ReceiverSpec>] = [
            .number("x", -1e6...1e6, \.x).required, .number("y", -1e6...1e6, \.y).required,
            .number("z", -100...1000, \.z), .int("level", -100...200, \.level),
        ]
        let fields: [ConfigField<ReceiverSpec>] = [
            ConfigField("position") { r, n, p, receiver in r.read(n, p, position, into: &receiver) }.required,
            .number("rssi_at_1m", -127...20, \.rssiAt1m), .number("path_loss_exponent", 1.0...6.0, \.pathLossExponent),
            .identifier("gateway", \.gateway), .identifier("adapter", \.adapter),
        ]
        return entries(node, "receivers", fields, ids: &written) { _, id, _ in
            ReceiverSpec(id: id, x: 0, y: 0, level: 0)
        }
    }

    func readAssets(_ node: Node, ids written: inout Set<String>) -> [AssetSpec] {
        let fields: [ConfigField<AssetSpec>] = [
            .string("name", \.name),
            .init("missing_after") { r, n, p, asset in
                let range = SectionReader.missingRange
                asset.missingAfter = r.reader.duration(n, p, min: range.lowerBound, max: range.upperBound)
            },
        ]
        return entries(node, "assets", required: ["beacon"], fields, ids: &written) { f, id, item in
            guard let beaconNode = required(f, "beacon", in: item), let tag = readTag(beaconNode, f.path("beacon"))
            else { return nil }
            return AssetSpec(id: id, name: nil, beacon: tag)
        }
    }

    private func readTag(_ node: Node, _ path: String) -> AssetSpec.Tag? {
        let keys = ["uuid", "major", "minor", "namespace", "instance", "address", "irk"]
        guard let f = reader.mapping(node, path, allowed: keys) else { return nil }
        let given = keys.filter { f[$0] != nil }
        if given.contains("irk") {
            guard given == ["irk"] else {
                reader.fail(node, path, "an irk names a phone or a watch by itself: give it alone")
                return nil
            }
            guard let s = reader.string(f["irk"]!, f.path("irk")) else { return nil }
            guard let key = IdentityResolvingKey(hex: s) else {
                reader.fail(
                    f["irk"]!, f.path("irk"),
                    // Not echoed: a key mistyped by a digit is still most of a phone's secret,
                    // and this goes to the journal of a refused reload and to --check-config.
                    "expected an identity resolving key of 32 hex digits (beaconctl enroll prints it), got "
                        + "\(s.count) characters (not shown: a key is a secret)")
                return nil
            }
            return .irk(key)
        }
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
        let fields: [ConfigField<AlarmSpec>] = [
            .choices("on", \.on),
            .init("dwell") { r, n, p, alarm in
                alarm.dwell = r.reader.duration(n, p, min: .seconds(1), max: SectionReader.maxDwell)
            },
            .init("assets") { r, n, p, alarm in
                alarm.assets = r.references(n, p, known: assets, kind: "asset", section: "assets")
            },
            .flag("active", \.active),
            .duration("confirm", .seconds(0)...SectionReader.maxConfirm, \.confirm),
        ]
        return entries(
            node, "alarms", required: ["zones"], fields, ids: &ids,
            make: { f, id, item in
                var alarm = AlarmSpec(id: id, zones: [], on: [.enter, .exit])
                if let zonesNode = required(f, "zones", in: item) {
                    alarm.zones = references(zonesNode, f.path("zones"), known: zones, kind: "zone", section: "zones")
                }
                return alarm
            },
            check: { alarm, f, item in
                if alarm.on.contains(.dwell), alarm.dwell == nil, f["dwell"] == nil {
                    reader.fail(item, f.path, "on: [dwell] needs a dwell duration, like dwell: 5m")
                }
            })
    }

    func references(_ node: Node, _ path: String, known: Set<String>, kind: String, section: String) -> [String] {
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
        let batch: [ConfigField<WebhookSpec>] = [
            .int("max_events", 1...1000, \.batchMaxEvents),
            .duration("max_delay", .seconds(0)...(.minutes(5)), \.batchMaxDelay),
        ]
        let fields: [ConfigField<WebhookSpec>] = [
            .strings("events", \.events),
            .init("secret_file") { r, n, p, hook in hook.secretFile = r.readableFile(n, p) },
            // After secret_file: a standard signature checks the secret it holds.
            .init("signature", Self.readSignature),
            .init("batch") { r, n, p, hook in r.read(n, p, batch, into: &hook) },
            .duration("timeout", .milliseconds(100)...(.minutes(5)), \.timeout),
            .duration("max_age", .seconds(1)...(.hours(24 * 30)), \.maxAge),
        ]
        return entries(node, "webhooks", required: ["url"], fields, ids: &ids) { f, id, item in
            guard let urlNode = required(f, "url", in: item), let url = reader.string(urlNode, f.path("url")) else {
                return nil
            }
            if let problem = Self.webhookURLProblem(url) {
                reader.fail(urlNode, f.path("url"), problem)
                return nil
            }
            return WebhookSpec(id: id, url: url)
        }
    }

    /// Why `url` cannot be a webhook's, or nil.
    static func webhookURLProblem(_ url: String) -> String? {
        guard url.hasPrefix("http://") || url.hasPrefix("https://"), url.utf8.count > 8 else {
            return "expected an http:// or https:// URL, got \"\(url)\""
        }
        if let bad = url.unicodeScalars.first(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
            let what = bad == " " ? "a space" : "control character U+\(String(bad.value, radix: 16, uppercase: true))"
            return "a URL may not contain \(what) (write a space as %20)"
        }
        let authority = url.drop { $0 != "/" }.dropFirst(2).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty, !authority.hasPrefix(":"), !authority.hasPrefix("@") else {
            return "expected a host after the scheme, got \"\(url)\""
        }
        return nil
    }

    /// `signature: beacond | standard`; standard needs a `whsec_` secret in `secret_file`.
    private static func readSignature(_ r: SectionReader, _ n: Node, _ p: String, _ hook: inout WebhookSpec) {
        guard let name = r.reader.string(n, p) else { return }
        guard let scheme = WebhookSignature(rawValue: name) else {
            return r.reader.fail(n, p, "expected beacond or standard, got \"\(name)\"")
        }
        hook.signature = scheme
        guard scheme == .standard else { return }
        guard let file = hook.secretFile else {
            return r.reader.fail(n, p, "signature: standard needs secret_file, a file holding a whsec_ secret")
        }
        if let text = r.secretText(file), case let .failure(problem) = WebhookSignature.standardKey(text) {
            r.reader.fail(n, p, "\(file) is not a Standard Webhooks secret: \(problem.message)")
        }
    }
}
