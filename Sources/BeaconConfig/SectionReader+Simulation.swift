import BeaconCore

/// `simulation:` (extension): the radio channel and the tags' behaviour of a simulated site.
extension SectionReader {
    func readSimulation(_ node: Node) -> SimulationSettings? {
        let keys = [
            "floor", "sigma_db", "shadowing_distance", "shadowing_time", "noise_db", "fast_fading", "packet_loss",
            "multipath", "body_loss_db",
            "advertising_hz", "rssi_at_1m", "path_loss_exponent", "walking_speed", "pause", "zone_visits", "walls",
            "receiver_gain_db",
        ]
        guard let f = reader.mapping(node, "simulation", allowed: keys) else { return nil }
        var s = SimulationSettings()
        with(f, "floor") { n, p in
            guard let floor = reader.mapping(n, p, allowed: ["width", "depth"]) else { return }
            with(floor, "width") { n, p in if let v = reader.double(n, p, 1...10_000) { s.width = v } }
            with(floor, "depth") { n, p in if let v = reader.double(n, p, 1...10_000) { s.depth = v } }
        }
        with(f, "sigma_db") { n, p in if let v = reader.double(n, p, 0...30) { s.sigmaDB = v } }
        with(f, "shadowing_distance") { n, p in if let v = reader.double(n, p, 0.1...100) { s.shadowingDistance = v } }
        with(f, "shadowing_time") { n, p in
            if let v = reader.duration(n, p, min: .milliseconds(100), max: .hours(24)) { s.shadowingTime = v }
        }
        with(f, "noise_db") { n, p in if let v = reader.double(n, p, 0...30) { s.noiseDB = v } }
        with(f, "fast_fading") { n, p in if let v = reader.bool(n, p) { s.fastFading = v } }
        with(f, "packet_loss") { n, p in if let v = reader.double(n, p, 0...0.99) { s.packetLoss = v } }
        with(f, "multipath") { n, p in if let v = reader.double(n, p, 0...1) { s.multipath = v } }
        with(f, "body_loss_db") { n, p in if let v = reader.double(n, p, 0...30) { s.bodyLossDB = v } }
        with(f, "advertising_hz") { n, p in if let v = reader.double(n, p, 0.1...50) { s.advertisingHz = v } }
        with(f, "rssi_at_1m") { n, p in if let v = reader.double(n, p, -127...20) { s.rssiAt1m = v } }
        with(f, "path_loss_exponent") { n, p in if let v = reader.double(n, p, 1...6) { s.pathLossExponent = v } }
        with(f, "walking_speed") { n, p in
            if let v = pair(n, p, { reader.double($0, $1, 0.01...10) }) { s.walkingSpeed = v.0...v.1 }
        }
        with(f, "pause") { n, p in
            if let v = pair(n, p, { reader.duration($0, $1, min: .seconds(0), max: .hours(24)) }) {
                s.pause = v.0...v.1
            }
        }
        with(f, "receiver_gain_db") { n, p in if let v = reader.double(n, p, 0...20) { s.receiverGainDB = v } }
        with(f, "zone_visits") { n, p in if let v = reader.double(n, p, 0...1) { s.zoneVisits = v } }
        with(f, "walls") { n, p in
            guard let items = reader.sequence(n, p) else { return }
            for (i, item) in items.enumerated() {
                let path = "\(p)[\(i)]"
                guard let numbers = reader.sequence(item, path), numbers.count == 5 else {
                    reader.fail(item, path, "expected [x0, y0, x1, y1, loss_db]")
                    continue
                }
                let v = numbers.enumerated().compactMap { reader.double($1, "\(path)[\($0)]", -1e6...1e6) }
                guard v.count == 5 else { continue }
                s.walls.append(.init(from: Point(x: v[0], y: v[1]), to: Point(x: v[2], y: v[3]), lossDB: v[4]))
            }
        }
        return s
    }

    /// `[low, high]`.
    private func pair<T: Comparable>(_ node: Node, _ path: String, _ read: (Node, String) -> T?) -> (T, T)? {
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
