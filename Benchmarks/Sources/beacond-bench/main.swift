// Throughput and memory of the engine: decode + monitor + range synthetic sightings for
// 10,000 beacons across 50 clients × 20 regions. Run a release build:
//   swift run -c release beacond-bench [sightings]
//   swift run -c release beacond-bench --trace FILE --config FILE   (the engine alone on a trace)
//   swift run -c release beacond-bench --events [N]                  (events written as CloudEvents)
//   swift run -c release beacond-bench --phones [KEYS]               (phones' private addresses, SPEC §9)
//   swift run -c release beacond-bench --ad-structures [N]           (raw AD structures, as proxies send)
// It prints sightings/s on one core and peak RSS; BENCHMARKS.md keeps the figures.

import BeaconCore

#if canImport(Glibc)
    import Glibc
#endif

if let i = CommandLine.arguments.firstIndex(of: "--trace"), i + 1 < CommandLine.arguments.count,
    let c = CommandLine.arguments.firstIndex(of: "--config"), c + 1 < CommandLine.arguments.count
{
    traceMode(trace: CommandLine.arguments[i + 1], config: CommandLine.arguments[c + 1])
    exit(0)
}

if let i = CommandLine.arguments.firstIndex(of: "--ad-structures") {
    adStructuresMode(count: i + 1 < CommandLine.arguments.count ? Int(CommandLine.arguments[i + 1]) ?? 20_000 : 20_000)
    exit(0)
}

if let i = CommandLine.arguments.firstIndex(of: "--events") {
    eventsMode(count: i + 1 < CommandLine.arguments.count ? Int(CommandLine.arguments[i + 1]) ?? 1_000_000 : 1_000_000)
    exit(0)
}

let total = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 5_000_000 : 5_000_000
let beaconCount = 10_000
let clientCount = 50
let regionsPerClient = 20

/// Ten site uuids; each client watches its own mix of uuid, uuid+major and uuid+major+minor
/// regions, one of them ranging, so every beacon matches a few regions.
let uuids = (0..<10).map { BeaconUUID(high: 0xE2C5_6DB5_DFFB_48D2 &+ UInt64($0), low: 0xB060_D0F5_A710_96E0) }

func payload(uuid: BeaconUUID, major: UInt16, minor: UInt16) -> [UInt8] {
    IBeaconID(uuid: uuid, major: major, minor: minor).payload(measuredPower: -59)
}

var clients: [ClientSpec] = []
for c in 0..<clientCount {
    var regions: [RegionSpec] = []
    for r in 0..<regionsPerClient {
        let uuid = uuids[(c + r) % uuids.count]
        switch r % 3 {
        case 0: regions.append(RegionSpec(id: "r\(r)", uuid: uuid, dwell: [.minutes(2)]))
        // One ranging region per client, over the ~20 beacons of one uuid+major (a shop's aisle).
        case 1: regions.append(RegionSpec(id: "r\(r)", uuid: uuid, major: UInt16(r), ranging: r == 1))
        default: regions.append(RegionSpec(id: "r\(r)", uuid: uuid, major: UInt16(r), minor: UInt16(c)))
        }
    }
    clients.append(ClientSpec(id: "client-\(c)", regions: regions))
}

// One prepared advertisement per beacon (plus phones that are not beacons); the loop varies
// time and RSSI, and the decoder reads the bytes every time.
var adverts: [Sighting] = (0..<beaconCount).map { i in
    Sighting(
        time: .seconds(0), receiver: ["hci0", "hci1", "remote-7"][i % 3], address: "C3:11:22:33:44:55", rssi: -70,
        manufacturerData: [
            ManufacturerDatum(
                company: 0x004C,
                payload: payload(uuid: uuids[i % uuids.count], major: UInt16(i % 50), minor: UInt16(i / 50)))
        ])
}
for i in 0..<(beaconCount / 10) {
    adverts[i * 10 + 9].manufacturerData = [
        ManufacturerDatum(company: 0x004C, payload: [0x10, 0x05, 0x03, 0x1C, 0x0F, 0x3E, UInt8(i & 0xFF)])
    ]
}

let start = Timestamp.seconds(1_763_805_600)

if let i = CommandLine.arguments.firstIndex(of: "--phones") {
    let keys = i + 1 < CommandLine.arguments.count ? Int(CommandLine.arguments[i + 1]) ?? 1000 : 1000
    phonesMode(keys: keys, seconds: 5, clients: clients, adverts: adverts, start: start)
    exit(0)
}

var engine = BeaconEngine(
    configuration: EngineConfiguration(
        clients: clients, receivers: ["hci0": ReceiverCalibration(rssiAt1m: -59, pathLossExponent: 2)]),
    start: start)

var events = 0
var eventKinds: [String: Int] = [:]
let clock = ContinuousClock()
let began = clock.now
for n in 0..<total {
    let i = n % beaconCount
    let round = n / beaconCount
    // Each beacon is heard once per simulated second; a tenth of them leave for 40 s every 200 s.
    if i % 10 == 3 && round % 200 >= 160 { continue }
    var s = adverts[i]
    s.time = start + .milliseconds(Int64(round) * 1000 + Int64(i % 1000))
    s.rssi = -60 - (i &* 7 &+ round &* 13) % 30
    let out = engine.ingest(s)
    if !out.isEmpty {
        events += out.count
        for e in out { eventKinds[e.payload.kind, default: 0] += 1 }
    }
}
let elapsed = clock.now - began
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18

var usage = rusage()
getrusage(RUSAGE_SELF.rawValue, &usage)
let peakMB = Double(usage.ru_maxrss) / 1024
let processed = engine.counters.sightings

print("beacond-bench: \(beaconCount) beacons, \(clientCount) clients x \(regionsPerClient) regions")
print(
    "  sightings processed: \(processed) (\(engine.counters.decode.decoded) decoded, \(engine.counters.decode.totalNonMatches) not beacons)"
)
print("  wall time:           \(format3(seconds)) s")
print("  throughput:          \(Int(Double(processed) / seconds)) sightings/s on one core")
print(
    "  events:              \(events) "
        + eventKinds.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
print("  peak RSS:            \(format3(peakMB)) MB")

func format3(_ v: Double) -> String {
    let scaled = (v * 1000).rounded() / 1000
    return String(scaled)
}
