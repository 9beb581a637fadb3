import BeaconCore
import Foundation
import Glibc
import Simulation
import Storage

// The zone analytics in the state store (issue 41): what counting costs at 1,000 moving
// assets and 50 zones, how much the state file grows a day, and how fast a 90-day report
// answers. `beacond-position-bench analytics-store`; BENCHMARKS.md keeps the figures.
//
// The day: each asset stays in a zone for an exponential time (mean 4 min), then walks
// outside any zone for one (mean 1 min), then enters another zone at random: about 400
// transitions a minute. The engine commits each turn's transitions with its states; here
// each second's transitions are one commit of their own (an upper bound: in the daemon they
// share the turn's transaction). Heat: 1,000 assets on a 60 × 40 m floor, added every 30 s.

/// CPU seconds this thread has used.
func threadCPU() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// A field of /proc/self/status, in KiB.
func statusKiB(_ field: String) -> Int {
    let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = text.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
}

/// glibc's `malloc_trim(0)` (not in Swift's Glibc module): freed memory given back, so that
/// the RSS before a measured step is what is live.
func returnFreeMemory() {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
    _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
}

/// Sets VmHWM back to the present RSS (Linux ≥ 4.0), so the next peak is that of what follows.
func resetPeakRSS() {
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
}

func fileBytes(_ directory: String, _ names: [String] = ["beacond.sqlite", "beacond.sqlite-wal"]) -> Int {
    names.reduce(0) { total, name in
        total + ((try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.size] as? Int) ?? 0)
    }
}

/// Another writer beside the roll, as the engine's turns are: a small write every 5 ms, timed,
/// to see how long the roll keeps the state store's writer from them.
final class WriteProbe: @unchecked Sendable {
    private let lock = NSLock()
    private var running = true
    private var writes = 0
    private var longest = 0.0
    private let finished = DispatchSemaphore(value: 0)

    init(store: StateStore, hour: Timestamp) {
        Thread.detachNewThread { [self] in
            var cell = HeatMap()
            cell.add(Point(x: 1, y: 1), level: 0, for: .seconds(1))
            while lock.withLock({ running }) {
                let t0 = Date()
                try! store.addHeat(cell, hour: hour)
                let took = Date().timeIntervalSince(t0)
                lock.withLock { (writes, longest) = (writes + 1, max(longest, took)) }
                usleep(5_000)
            }
            finished.signal()
        }
    }

    /// Stops the writes: how many were made, and the longest, in seconds.
    func stop() -> (Int, Double) {
        lock.withLock { running = false }
        finished.wait()
        return lock.withLock { (writes, longest) }
    }
}

/// A day of transitions, second by second, for `assets` over `zones`, from `start`.
func generatedDay(assets: Int, zones: Int, start: Timestamp, seed: UInt64) -> [[ZoneTransition]] {
    var random = SeededRandom(seed: seed)
    func exponential(_ mean: Double) -> Double { -mean * log(max(1e-12, random.uniform())) }
    var bySecond = [[ZoneTransition]](repeating: [], count: 86_400)
    for a in 0..<assets {
        var t = exponential(60)
        var zone: Int?
        while t < 86_400 {
            let second = Int(t)
            if let z = zone {
                bySecond[second].append(
                    ZoneTransition(
                        zone: "zone-\(z)", asset: "asset-\(a)", entered: false, time: start + .seconds(Int64(second))))
                zone = nil
                t += exponential(60)
            } else {
                let z = Int(random.uniform() * Double(zones)) % zones
                bySecond[second].append(
                    ZoneTransition(
                        zone: "zone-\(z)", asset: "asset-\(a)", entered: true, time: start + .seconds(Int64(second))))
                zone = z
                t += exponential(240)
            }
        }
    }
    // Each change both as the live membership's and as a visit's (SPEC §10): the store holds both.
    return bySecond.map { second in
        second.flatMap {
            [$0, ZoneTransition(zone: $0.zone, asset: $0.asset, entered: $0.entered, time: $0.time, visit: true)]
        }
    }
}

func analyticsStoreBench(assets: Int = 1_000, zones: Int = 50, days: Int = 90) {
    print("## zone analytics in the state store: \(assets) assets, \(zones) zones")
    let kept = ProcessInfo.processInfo.environment["BENCH_KEEP"]
    let directory = kept ?? NSTemporaryDirectory() + "beacond-analytics-bench-\(UUID().uuidString)"
    let midnight = Timestamp.seconds(1_763_769_600)
    if let kept, FileManager.default.fileExists(atPath: kept + "/beacond.sqlite") {
        timeReport(try! StateStore(directory: kept), zones: zones, days: days, end: midnight + .hours(24))
        return
    }
    let store = try! StateStore(directory: directory)
    var day = generatedDay(assets: assets, zones: zones, start: midnight, seed: 41)
    let transitions = day.reduce(0) { $0 + $1.count }
    try! store.saveRollup(ZoneRollup(startingAt: midnight, open: []), .init(), keepAfter: .seconds(0))
    let before = fileBytes(directory)

    // A day as the daemon lives it: commits every second, heat every 30 s, a roll every 30 s.
    var random = SeededRandom(seed: 7)
    var commitCPU = 0.0, heatCPU = 0.0, rollCPU = 0.0
    var peak = 0
    for second in 0..<86_400 {
        let now = midnight + .seconds(Int64(second))
        if !day[second].isEmpty {
            let c0 = threadCPU()
            try! store.commit([], transitions: day[second])
            commitCPU += threadCPU() - c0
        }
        if second % 30 == 29 {
            var heat = HeatMap()
            for _ in 0..<assets {
                heat.add(Point(x: random.uniform() * 60, y: random.uniform() * 40), level: 0, for: .seconds(30))
            }
            let h0 = threadCPU()
            try! store.addHeat(heat, hour: ZoneBucketStats.hour(of: now))
            heatCPU += threadCPU() - h0
            // What `ZoneAnalytics.tick` does: a roll only when an hour has ended.
            let r0 = threadCPU()
            _ = try! store.rollZones(at: now, keepAfter: now - .hours(24 * 90))
            rollCPU += threadCPU() - r0
        }
        if second % 3600 == 3599 { peak = max(peak, fileBytes(directory)) }
    }
    // The day rolls at midnight: its transitions go. What that roll holds at once is measured
    // from a peak reset just before it (the generated day dropped first).
    day = []
    returnFreeMemory()
    let rss0 = statusKiB("VmRSS")
    resetPeakRSS()
    let probe = WriteProbe(store: store, hour: midnight + .hours(24))
    let r0 = threadCPU()
    _ = try! store.rollZones(at: midnight + .hours(24) + .seconds(1), keepAfter: .seconds(0))
    let midnightCPU = threadCPU() - r0
    let (writes, longest) = probe.stop()
    rollCPU += midnightCPU
    print(
        String(
            format: "the midnight roll: %.2f CPU-s, peak RSS %.1f MB over the %.1f MB before it; "
                + "a write every 5 ms beside it (as the engine's turns): %d, the longest %.0f ms",
            midnightCPU, Double(statusKiB("VmHWM") - rss0) / 1024, Double(rss0) / 1024, writes, longest * 1000))
    let after = fileBytes(directory)
    let log = fileBytes(directory, ["beacond.sqlite-wal"])
    let left = try! store.zoneTransitions(after: 0).count
    var one = HeatMap()  // the next write, as the daemon's next engine turn or heat would be
    one.add(Point(x: 1, y: 1), level: 0, for: .seconds(1))
    try! store.addHeat(one, hour: midnight + .hours(24))
    let logAfter = fileBytes(directory, ["beacond.sqlite-wal"])
    let total = commitCPU + heatCPU + rollCPU
    print(
        String(
            format: "a day: %d transitions; CPU: commits %.1f s, heat %.1f s, rolls %.1f s = %.1f s, %.3f %% of a core",
            transitions, commitCPU, heatCPU, rollCPU, total, total / 864))
    print(
        String(
            format:
                "state file: %.1f MB before the day, %.1f MB at most during it, %.1f MB after its roll (%d transitions "
                + "left; %.1f MB of it the write-ahead log, %.1f MB after the next write)",
            Double(before) / 1e6, Double(peak) / 1e6, Double(after) / 1e6, left, Double(log) / 1e6,
            Double(logAfter) / 1e6))

    // 90 days of roll-ups: the day's rows again for every day back.
    let hours = try! store.zoneFigures(span: ZoneRollup.hour, zone: nil, from: midnight, to: midnight + .hours(24))
    let daily = try! store.zoneFigures(span: ZoneRollup.dayLength, zone: nil, from: midnight, to: midnight + .hours(24))
    let mark = try! store.zoneRollupMark()!
    print("one day's roll-ups: \(hours.count) zone-hours, \(daily.count) zone-days")
    let g0 = Date()
    for back in 1..<days {
        let shift = TimeSpan.hours(24 * Int64(back))
        var rolled = ZoneRollup.Rolled()
        rolled.hours = hours.map { stats(of: $0, at: $0.start - shift) }
        rolled.days = daily.map { stats(of: $0, at: $0.start - shift) }
        try! store.saveRollup(mark, rolled, keepAfter: .seconds(0))
    }
    print(
        String(
            format: "%d days of roll-ups written in %.1f s; state file %.1f MB", days, Date().timeIntervalSince(g0),
            Double(fileBytes(directory)) / 1e6))

    timeReport(store, zones: zones, days: days, end: midnight + .hours(24))
    if kept == nil { try? FileManager.default.removeItem(atPath: directory) }
}

/// The report: every zone by day over `days`, and one zone by hour over 24 hours.
func timeReport(_ store: StateStore, zones: Int, days: Int, end: Timestamp) {
    let from = end - .hours(24 * Int64(days))
    var reportTimes: [Double] = []
    var chartTimes: [Double] = []
    for _ in 0..<7 {
        let t0 = Date()
        var visits = 0
        for z in 0..<zones {
            let rows = try! store.zoneBuckets(
                zone: "zone-\(z)", span: ZoneRollup.dayLength, from: from, to: end, now: end + .seconds(1))
            visits += ZoneFigures.span(rows, zone: "zone-\(z)", start: from, length: end - from).visits
        }
        reportTimes.append(Date().timeIntervalSince(t0) * 1000)
        precondition(visits > 0)
        let c0 = Date()
        _ = try! store.zoneBuckets(
            zone: "zone-0", span: ZoneRollup.hour, from: end - .hours(24), to: end, now: end + .seconds(1))
        chartTimes.append(Date().timeIntervalSince(c0) * 1000)
    }
    reportTimes.sort()
    chartTimes.sort()
    print(
        String(
            format: "%d-day report, %d zones by day: median %.0f ms, max %.0f ms; one zone's 24 hours: median %.1f ms",
            days, zones, reportTimes[3], reportTimes.last!, chartTimes[3]))
}

/// A stored row as the roll-up it came from, at another start (the dwells from its bins).
func stats(of f: ZoneFigures, at start: Timestamp) -> ZoneBucketStats {
    var s = ZoneBucketStats(zone: f.zone, hour: start)
    (s.visits, s.assets, s.occupancyMax, s.assetSeconds) = (f.visits, f.assets, f.occupancyMax, f.assetSeconds)
    s.occupancyMean = f.occupancyMean
    var dwells: [Double] = []
    for pair in f.bins.pairs {
        dwells += Array(repeating: DwellBins.middleValue(of: Int(pair.bin)), count: Int(pair.count))
    }
    s.dwells = dwells.sorted()
    return s
}
