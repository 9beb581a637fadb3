import BeaconConfig
import BeaconCore
import BeaconRuntime

#if canImport(Glibc)
    import Glibc
#endif

/// `beacond-bench --trace FILE --config FILE`: the engine alone on a replay trace. Every line
/// is read first, then read again timed (the reader alone); then the sightings go through `BeaconEngine.ingest` as
/// `beacond replay` feeds them, and only that is timed, in CPU seconds. Beside the replay's
/// own figure it shows what reading the lines costs (bench/replay-ingest.py prints both).
func traceMode(trace: String, config path: String) {
    guard let text = try? readTextFile(path),
        let config = try? ConfigLoader.load(yaml: text, file: path, fileReadable: { _ in nil })
    else {
        print("beacond-bench: cannot load \(path)")
        exit(78)
    }
    var sightings: [Sighting] = []
    var reader = SightingLineReader()
    do {
        try BlockLineReader(path: trace).forEachLine { line, _ in
            if let s = try? reader.read(line) { sightings.append(s) }
        }
    } catch {
        print("beacond-bench: \(error)")
        exit(66)
    }
    // The reader alone, each sighting dropped once read (an array of a million would measure
    // the memory it takes instead).
    let reading = cpuSeconds()
    var read = 0
    try? BlockLineReader(path: trace).forEachLine { line, _ in
        if let s = try? reader.read(line) { read &+= s.rssi }
    }
    let readTook = cpuSeconds() - reading
    guard let first = sightings.first, read != 0 else { return }
    var engine = BeaconEngine(configuration: config.engineConfiguration, start: first.time)
    var events = 0
    let start = cpuSeconds()
    for s in sightings { events += engine.ingest(s).count }
    let took = cpuSeconds() - start
    print(
        "engine alone on \(trace): \(sightings.count) sightings in \(took) CPU-s, "
            + "\(Int(Double(sightings.count) / took)) sightings per CPU-second, \(events) events; "
            + "the reader alone took \(readTook) CPU-s")
}

func cpuSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}
