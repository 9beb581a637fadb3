import BeaconCore
import Foundation
import Storage

// `beacond-publish-bench trim [events]`: what the engine's commit costs when the history's
// limits are lowered by a reload (or a clock steps far forward) over a long history. The
// engine commits on its own thread, so the longest commit is how long its turns stall.

func trimBench(events: Int) throws {
    let directory = NSTemporaryDirectory() + "beacond-trim-bench-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let store = try StateStore(directory: directory)
    let body = String(repeating: "x", count: 600)  // about an asset.position's CloudEvent
    var time = Timestamp.seconds(1_763_769_600)
    func batch(_ count: Int, from first: Int) -> [StateStore.StoredEvent] {
        (first..<first + count).map { n in
            time = time + .milliseconds(1)
            return .init(id: String(format: "%020d", n), type: "beacond.asset.position", time: time, body: body)
        }
    }
    store.setRetention(
        HistoryRetention(
            alerts: .init(maxAge: .hours(24 * 30), maxEvents: 5_000_000),
            telemetry: .init(maxAge: .hours(24 * 30), maxEvents: 5_000_000)))
    for first in stride(from: 0, to: events, by: 1_000) { try store.commit(batch(1_000, from: first)) }
    print("history: \(events) telemetry events of \(body.count + 100) bytes or so")
    // The reload: at most 1,000 kept. Then the engine's next turns, 10 events each.
    store.setRetention(
        HistoryRetention(
            alerts: .init(maxAge: .hours(24 * 30), maxEvents: 1_000),
            telemetry: .init(maxAge: .hours(6), maxEvents: 1_000)))
    var longest = 0.0
    var turns = 0
    var next = events
    repeat {
        let t0 = Date()
        try store.commit(batch(10, from: next))
        longest = max(longest, Date().timeIntervalSince(t0))
        next += 10
        turns += 1
    } while try store.events(limit: 1_001).count > 1_000 && turns < 10_000
    print(
        String(
            format: "after the limit fell to 1,000: %d commits of 10 events until the history held 1,000; "
                + "the longest %.0f ms", turns, longest * 1000))
}
