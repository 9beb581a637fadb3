// beacond's side of the D-Bus ingest benchmark (BENCHMARKS.md, bench/dbus-ingest.py):
// the daemon's own BlueZScanner and LiveEngine, end to end — D-Bus message to decoded
// sighting to engine — on the bus DBUS_SYSTEM_BUS_ADDRESS names. Prints "ready" once
// connected, then, after COUNT signals have reached the engine, one JSON line with the
// wall time from the first signal to the last ingested sighting and the process CPU time.
//   beacond-dbus-bench COUNT

import BeaconCore
import BeaconRuntime
import BlueZ
import Dispatch
import Logs
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

let count = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 100_000 : 100_000

@Sendable func wallClock() -> Timestamp {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Timestamp(nanoseconds: Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec))
}

func monotonic() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

// The same kind of load as the engine benchmark: clients watching the emitter's uuid.
let uuid = BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
let clients = (0..<5).map { c in
    ClientSpec(
        id: "c\(c)",
        regions: [RegionSpec(id: "store", uuid: uuid), RegionSpec(id: "aisle", uuid: uuid, major: UInt16(c))])
}
let engine = LiveEngine(
    engine: BeaconEngine(configuration: EngineConfiguration(clients: clients), start: wallClock()), clock: wallClock,
    publish: { _ in })
let scanner = BlueZScanner(
    settings: ScannerSettings(), clock: wallClock,
    output: { output in
        if case let .sightings(batch) = output { engine.submit(.sightings(batch)) }
    },
    logger: LineLogHandler.logger(level: .warning) { print("log: \($0)") })

guard scanner.prepare() else {
    print("beacond-dbus-bench: no org.bluez on the bus")
    exit(1)
}
print("ready")
fflush(stdout)
let cpuAtStart = cpuSeconds()
let threads = DispatchGroup()
for body in [{ engine.run() }, { scanner.run() }] as [@Sendable () -> Void] {
    threads.enter()
    DispatchQueue.global().async {
        body()
        threads.leave()
    }
}
var firstSignal: Double?
var allReceived: Double?
while engine.sightingsIngested.load(ordering: .relaxed) < count {
    let received = scanner.signalsReceived.load(ordering: .relaxed)
    // A couple of bus signals (NameAcquired) arrive at start-up: the flood starts after them.
    if firstSignal == nil, received > 10 { firstSignal = monotonic() }
    if allReceived == nil, received >= count { allReceived = monotonic() }
    usleep(5000)
    if getenv("BENCH_TRACE") != nil, let f = firstSignal {
        fputs("\(monotonic() - f) \(received) \(engine.sightingsIngested.load(ordering: .relaxed))\n", stderr)
    }
}
let end = monotonic()
let cpu = cpuSeconds() - cpuAtStart
let wall = end - (firstSignal ?? end)
print(
    "{\"receiver\":\"beacond\",\"signals\":\(scanner.signalsReceived.load(ordering: .relaxed)),\"sightings\":\(engine.sightingsIngested.load(ordering: .relaxed)),"
        + "\"wall_s\":\(wall),\"received_s\":\((allReceived ?? end) - (firstSignal ?? end)),\"cpu_s\":\(cpu)}")
fflush(stdout)
scanner.stop()
engine.stop()
threads.wait()
