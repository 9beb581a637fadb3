// Publishing benchmarks (issue 4), release build, from the package root:
//   swift run -c release beacond-publish-bench [events] [latency-samples]
//   swift run -c release beacond-publish-bench trim [events]   (TrimBench.swift)
// 1. Durable throughput: events made durable (history + outbox, one transaction per batch)
//    and then acknowledged by a local webhook receiver (a real HTTP server, Python).
// 2. Latency from a sighting handed to the engine to the webhook request arriving at the
//    receiver, with no batching delay (max_delay 0): p50 / p99 / max.
// BENCHMARKS.md keeps the figures.

import BeaconCore
import BeaconRuntime
import Dispatch
import Foundation
import Logs
import Publishing
import Storage

let eventCount = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 100_000 : 100_000
let samples = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 1_000 : 1_000
let uuid = BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

@Sendable func now() -> Timestamp {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Timestamp(nanoseconds: Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec))
}

/// The test receiver, started on a free port; its log has one line per request.
final class Receiver {
    let process = Process()
    let port: Int
    let log: String

    init() throws {
        log = NSTemporaryDirectory() + "beacond-bench-\(UUID().uuidString).jsonl"
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "Tests/DaemonTests/Support/webhook_receiver.py", "--log", log, "--quiet"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        var line = Data()
        while true {
            let byte = out.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data([10]) { break }
            line.append(byte)
        }
        port = Int(String(decoding: line, as: UTF8.self))!
    }

    deinit { process.terminate() }

    var requests: [[String: Any]] {
        guard let text = try? String(contentsOfFile: log, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }
}

func worker(_ store: StateStore, port: Int, maxDelay: TimeSpan) -> WebhookWorker {
    WebhookWorker(
        settings: .init(
            id: "bench", url: "http://127.0.0.1:\(port)/hook", events: EventTypeGlob(["*"]),
            secret: Array("bench-secret".utf8),
            schedule: DeliverySchedule(maxEvents: 50, maxDelay: maxDelay, maxAge: .hours(24)), timeout: .seconds(5)),
        store: store, clock: now, logger: LineLogHandler.logger { print($0) })
}

func throughput() throws {
    let receiver = try Receiver()
    let store = try StateStore(directory: NSTemporaryDirectory() + "beacond-bench-\(UUID().uuidString)")
    let hook = worker(store, port: receiver.port, maxDelay: .seconds(1))
    let publisher = EventPublisher(
        gateway: "bench", store: store, workers: [hook], echo: false, clock: now,
        logger: LineLogHandler.logger { print($0) })
    let thread = Thread { hook.run() }
    thread.start()
    let id = IBeaconID(uuid: uuid, major: 1, minor: 2)
    let start = now()
    var published = 0
    while published < eventCount {
        // One engine turn's worth: 100 events.
        let batch = (0..<min(100, eventCount - published)).map { i in
            Event(
                time: now(),
                payload: .regionEnter(
                    client: "client-\(i % 50)", region: "region-\(i % 20)", beacon: id, receiver: "hci0", rssi: -60,
                    distance: 1.5))
        }
        publisher.publish(batch)
        published += batch.count
    }
    let durable = now() - start
    while hook.counters.delivered < eventCount { usleep(1000) }
    let delivered = now() - start
    hook.stop()
    print(
        "throughput: \(eventCount) events durable in \(String(format: "%.2f", durable.seconds)) s "
            + "(\(Int(Double(eventCount) / durable.seconds)) events/s); acknowledged by the receiver in "
            + "\(String(format: "%.2f", delivered.seconds)) s (\(Int(Double(eventCount) / delivered.seconds)) events/s, "
            + "\(receiver.requests.count) requests)")
}

func latency() throws {
    let receiver = try Receiver()
    let store = try StateStore(directory: NSTemporaryDirectory() + "beacond-bench-\(UUID().uuidString)")
    let hook = worker(store, port: receiver.port, maxDelay: .seconds(0))
    let publisher = EventPublisher(
        gateway: "bench", store: store, workers: [hook], echo: false, clock: now,
        logger: LineLogHandler.logger { print($0) })
    var settings = MonitoringSettings()
    settings.enterSightings = 1
    settings.exitTimeout = .minutes(10)
    settings.regionLimit = 20
    let clients = (0..<(samples + 19) / 20).map { c in
        ClientSpec(
            id: "c\(c)", regions: (0..<20).map { r in RegionSpec(id: "r\(r)", uuid: uuid, major: UInt16(c * 20 + r)) })
    }
    let engine = LiveEngine(
        engine: BeaconEngine(
            configuration: EngineConfiguration(monitoring: settings, clients: clients, receivers: [:]), start: now()),
        clock: now, savingState: true
    ) { events, state, transitions in
        // As the daemon does: a turn's events and the states they moved to in one commit.
        publisher.publish(events, states: state, transitions: transitions)
    }
    Thread { engine.run() }.start()
    Thread { hook.run() }.start()
    var submitted: [String: Timestamp] = [:]
    for i in 0..<samples {
        let payload = IBeaconID(uuid: uuid, major: UInt16(truncatingIfNeeded: i), minor: 1).payload(measuredPower: -59)
        let t = now()
        submitted["c\(i / 20)/r\(i % 20)"] = t
        engine.submit(
            .sightings([
                Sighting(
                    time: t, receiver: "hci0", address: "C3:00:00:00:00:01", rssi: -60,
                    manufacturerData: [ManufacturerDatum(company: 0x004C, payload: payload)])
            ]))
        usleep(10_000)  // pacing: one sighting every 10 ms, each its own request
    }
    while hook.counters.delivered < samples { usleep(1000) }
    var latencies: [Double] = []
    for request in receiver.requests {
        let arrived = request["arrived"] as! Double
        for subject in request["subjects"] as! [String] {
            guard let t = submitted[subject] else { continue }
            latencies.append((arrived - t.unixSeconds) * 1000)
        }
    }
    latencies.sort()
    func p(_ q: Double) -> String {
        String(format: "%.2f", latencies[min(latencies.count - 1, Int(q * Double(latencies.count)))])
    }
    print(
        "latency: sighting -> webhook request at the receiver, \(latencies.count) samples: p50 \(p(0.5)) ms, "
            + "p90 \(p(0.9)) ms, p99 \(p(0.99)) ms, max \(String(format: "%.2f", latencies.last!)) ms")
    engine.stop()
    hook.stop()
}

if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "trim" {
    try trimBench(events: CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 500_000 : 500_000)
} else {
    try throughput()
    try latency()
}
