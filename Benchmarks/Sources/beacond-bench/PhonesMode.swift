import BeaconCore
import Simulation

#if canImport(Glibc)
    import Glibc
#endif

/// `beacond-bench --phones [KEYS]`: the engine's throughput when assets are phones known by
/// their identity resolving keys (SPEC §9) and the air is full of strangers' private
/// addresses. Each simulated second: the 10,000 beacons of the main benchmark once each,
/// 10,000 new resolvable private addresses that no key resolves (each heard 5 times), and
/// 200 configured phones heard 5 times each from their own addresses: 1,061,000 sightings.
/// Run with the keys and without (`--phones 0`, the same stream) to see what the keys cost.
func phonesMode(keys keyCount: Int, seconds: Int, clients: [ClientSpec], adverts: [Sighting], start: Timestamp) {
    var random = SeededRandom(seed: 42)
    let keys = (0..<keyCount).map { _ in
        IdentityResolvingKey(bytes: (0..<16).map { _ in UInt8(truncatingIfNeeded: random.next()) })!
    }
    let receivers = ["hci0", "hci1", "remote-7", "remote-8"]
    var site = SiteConfiguration()
    site.receivers = receivers.enumerated().map { i, id in
        SiteReceiver(id: id, position: Point(x: Double(i % 2) * 10, y: Double(i / 2) * 10), level: 0)
    }
    site.assets = keys.enumerated().map { i, key in AssetDefinition(id: "phone-\(i)", tag: .irk(key)) }
    // The 200 phones heard are configured ones; with no keys they are strangers too.
    let phones = (0..<200).map { i in
        (keys.isEmpty
            ? IdentityResolvingKey(bytes: (0..<16).map { UInt8(($0 + i) & 0xFF) })! : keys[i * keys.count / 200])
            .address(prand: UInt32(i))!
    }
    var engine = BeaconEngine(
        configuration: EngineConfiguration(
            clients: clients,
            receivers: Dictionary(uniqueKeysWithValues: receivers.map { ($0, ReceiverCalibration(rssiAt1m: -59)) }),
            site: site),
        start: start)
    var stream: [Sighting] = []
    stream.reserveCapacity(1_061_000)
    let clock = ContinuousClock()
    var elapsed = Duration.zero
    var events = 0
    for second in 0..<seconds {
        stream.removeAll(keepingCapacity: true)
        let base = start + .seconds(Int64(second))
        for (i, advert) in adverts.enumerated() {
            var s = advert
            s.time = base + TimeSpan(nanoseconds: Int64(i) * 94_000)
            stream.append(s)
        }
        // Strangers: a resolvable private address (top bits 01) whose hash is no key's.
        for n in 0..<10_000 {
            let high = UInt64(0x40) << 40 | UInt64(second) << 32
            let value = high | UInt64(n) << 8 | UInt64(UInt8(truncatingIfNeeded: random.next()))
            let address = BluetoothAddress(value: value).text
            for k in 0..<5 {
                let t = base + TimeSpan(nanoseconds: Int64(n) * 94_000 + Int64(k) * 1000)
                stream.append(
                    Sighting(time: t, receiver: receivers[k % 4], address: address, addressType: "random", rssi: -75))
            }
        }
        for (i, address) in phones.enumerated() {
            for k in 0..<5 {
                let t = base + .milliseconds(Int64(i) * 4 + Int64(k))
                stream.append(
                    Sighting(time: t, receiver: receivers[k % 4], address: address, addressType: "random", rssi: -65))
            }
        }
        stream.sort { $0.time < $1.time }
        // As the daemon takes them: batches (here of 10 ms of input), each prepared first.
        let began = clock.now
        var from = 0
        while from < stream.count {
            let to = min(from + stream.count / 100, stream.count)
            let batch = Array(stream[from..<to])
            engine.prepare(batch)
            for s in batch { events += engine.ingest(s).count }
            from = to
        }
        elapsed += clock.now - began
    }
    let cpu = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let processed = engine.counters.sightings
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let resolver = engine.tracker?.resolver
    print("beacond-bench --phones: \(keyCount) identity resolving keys, \(seconds) simulated seconds")
    print("  sightings:           \(processed) (10,000 stranger addresses and 1,000 phone sightings a second)")
    print("  addresses tried:     \(resolver?.tried ?? 0), resolved \(resolver?.resolved ?? 0)")
    print("  engine time:         \(format3(cpu)) s")
    print("  throughput:          \(Int(Double(processed) / cpu)) sightings/s on one core")
    print("  events:              \(events)")
    print("  peak RSS:            \(format3(Double(usage.ru_maxrss) / 1024)) MB")
}
