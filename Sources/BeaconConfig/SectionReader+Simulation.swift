import BeaconCore

/// `simulation:` (extension): the radio channel and the tags' behaviour of a simulated site.
extension SectionReader {
    func readSimulation(_ node: Node, assets: Set<String>) -> SimulationSettings? {
        var s = SimulationSettings()
        let floor: [ConfigField<SimulationSettings>] = [
            .number("width", 1...10_000, \.width), .number("depth", 1...10_000, \.depth),
        ]
        let fields: [ConfigField<SimulationSettings>] = [
            .init("floor") { r, n, p, s in r.read(n, p, floor, into: &s) },
            .number("sigma_db", 0...30, \.sigmaDB), .number("shadowing_distance", 0.1...100, \.shadowingDistance),
            .duration("shadowing_time", .milliseconds(100)...(.hours(24)), \.shadowingTime),
            .number("noise_db", 0...30, \.noiseDB), .flag("fast_fading", \.fastFading),
            .number("packet_loss", 0...0.99, \.packetLoss), .number("multipath", 0...1, \.multipath),
            .number("body_loss_db", 0...30, \.bodyLossDB), .number("advertising_hz", 0.1...50, \.advertisingHz),
            .number("rssi_at_1m", -127...20, \.rssiAt1m), .number("path_loss_exponent", 1...6, \.pathLossExponent),
            .init("walking_speed") { r, n, p, s in
                if let v = r.pair(n, p, { r.reader.double($0, $1, 0.01...10) }) { s.walkingSpeed = v.0...v.1 }
            },
            .init("pause") { r, n, p, s in
                if let v = r.pair(n, p, { r.reader.duration($0, $1, min: .seconds(0), max: .hours(24)) }) {
                    s.pause = v.0...v.1
                }
            },
            .number("zone_visits", 0...1, \.zoneVisits), .init("walls", Self.readWalls),
            .number("receiver_gain_db", 0...20, \.receiverGainDB),
            .init("tags") { r, n, p, s in s.tags = r.readSimulatedTags(n, p, assets: assets) },
        ]
        guard read(node, "simulation", fields, into: &s) != nil else { return nil }
        return s
    }

    /// `tags: [{asset, interval, telemetry, battery: {millivolts, drain_per_hour}, off_after, stands_at, picked_up_after}]`.
    /// Each names an asset of `assets:`.
    func readSimulatedTags(_ node: Node, _ path: String, assets: Set<String>) -> [SimulatedTag] {
        let battery: [ConfigField<SimulatedTag>] = [
            .int("millivolts", 0...5000, \.batteryMillivolts), .number("drain_per_hour", 0...100_000, \.drainPerHour),
        ]
        let fields: [ConfigField<SimulatedTag>] = [
            .init("interval") { r, n, p, t in
                t.interval = r.reader.duration(n, p, min: .milliseconds(20), max: .seconds(60))
            },
            .choice("telemetry", \.telemetry),
            .init("battery") { r, n, p, t in r.read(n, p, battery, into: &t) },
            .init("off_after") { r, n, p, t in
                t.offAfter = r.reader.duration(n, p, min: .seconds(0), max: .hours(24 * 7))
            },
            .init("stands_at") { r, n, p, t in
                guard let items = r.reader.sequence(n, p), items.count == 2 else {
                    return r.reader.fail(n, p, "expected [x, y] in metres")
                }
                guard let x = r.reader.double(items[0], p + "[0]", -10_000...10_000),
                    let y = r.reader.double(items[1], p + "[1]", -10_000...10_000)
                else { return }
                t.standsAt = Point(x: x, y: y)
            },
            .init("picked_up_after") { r, n, p, t in
                t.pickedUpAfter = r.reader.duration(n, p, min: .seconds(0), max: .hours(24 * 7))
            },
        ]
        guard let items = reader.sequence(node, path) else { return [] }
        var tags: [SimulatedTag] = []
        var named: [(String, Node)] = []
        for (i, item) in items.enumerated() {
            let itemPath = "\(path)[\(i)]"
            guard let f = reader.mapping(item, itemPath, allowed: ["asset"] + fields.map(\.key)),
                let n = required(f, "asset", in: item), let asset = reader.identifier(n, f.path("asset"))
            else { continue }
            guard assets.contains(asset) else {
                let guess = NodeReader.closest(to: asset, in: assets.sorted()).map { " (did you mean \"\($0)\"?)" }
                reader.fail(n, f.path("asset"), "no asset \"\(asset)\" in assets:" + (guess ?? ""))
                continue
            }
            var tag = SimulatedTag(asset: asset)
            apply(fields, f, in: item, into: &tag)
            named.append((asset, n))
            tags.append(tag)
        }
        checkUnique(named) { "\(path)[\($0)].asset" }
        return tags
    }

    /// `walls: [[x0, y0, x1, y1, loss_db], ...]`.
    private static func readWalls(_ r: SectionReader, _ n: Node, _ p: String, _ s: inout SimulationSettings) {
        guard let items = r.reader.sequence(n, p) else { return }
        for (i, item) in items.enumerated() {
            let path = "\(p)[\(i)]"
            guard let numbers = r.reader.sequence(item, path), numbers.count == 5 else {
                r.reader.fail(item, path, "expected [x0, y0, x1, y1, loss_db]")
                continue
            }
            let v = numbers.enumerated().compactMap { r.reader.double($1, "\(path)[\($0)]", -1e6...1e6) }
            guard v.count == 5 else { continue }
            s.walls.append(.init(from: Point(x: v[0], y: v[1]), to: Point(x: v[2], y: v[3]), lossDB: v[4]))
        }
    }

    /// `[low, high]`.
    func pair<T: Comparable>(_ node: Node, _ path: String, _ read: (Node, String) -> T?) -> (T, T)? {
        guard let items = reader.sequence(node, path), items.count == 2 else {
            reader.fail(node, path, "expected [low, high]")
            return nil
        }
        guard let a = read(items[0], path + "[0]"), let b = read(items[1], path + "[1]") else { return nil }
        guard a <= b else {
            reader.fail(node, path, "expected [low, high] with low <= high")
            return nil
        }
        return (a, b)
    }
}
