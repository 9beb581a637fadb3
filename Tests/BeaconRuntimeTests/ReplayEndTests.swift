import BeaconConfig
import BeaconCore
import Foundation
import Testing

@testable import BeaconRuntime

/// `beacond replay` ends as the trace does (issue 62, item 4): the visits whose look-ahead
/// reaches past the last record are decided with the evidence there is and told. Before, a
/// recording's last visits were never told (on a two-minute recording, most of them).
@Suite struct ReplayEndTests {
    static let config: Config = {
        let yaml = """
            gateway: {id: test-gw}
            receivers:
              - {id: r1, position: {x: 0, y: 0}, rssi_at_1m: -59}
              - {id: r2, position: {x: 10, y: 0}, rssi_at_1m: -59}
              - {id: r3, position: {x: 10, y: 10}, rssi_at_1m: -59}
              - {id: r4, position: {x: 0, y: 10}, rssi_at_1m: -59}
            assets:
              - {id: pallet-9, beacon: {address: "D0:00:00:00:00:09"}}
            zones:
              - {id: dock, level: 0, polygon: [[0, 0], [5, 0], [5, 10], [0, 10]]}

            """
        return try! ConfigLoader.load(yaml: yaml, file: "test.yaml")
    }()

    /// The pallet heard by the four receivers at `p`, five times a second, for `seconds`.
    static func lines(at p: (x: Double, y: Double), seconds: Range<Int>) -> [String] {
        seconds.flatMap { s in
            (0..<5).flatMap { k in
                [(0.0, 0.0, "r1"), (10, 0, "r2"), (10, 10, "r3"), (0, 10, "r4")].map { x, y, r in
                    let d = max(((p.x - x) * (p.x - x) + (p.y - y) * (p.y - y)).squareRoot(), 0.1)
                    let rssi = Int((-59 - 20 * log10(d)).rounded())
                    let t = 1_763_805_600 + Double(s) + Double(k) * 0.2
                    return #"{"t":\#(t),"receiver":"\#(r)","address":"d0:00:00:00:00:09","rssi":\#(rssi)}"#
                }
            }
        }
    }

    static func visits(_ lines: [String]) -> [JSONValue] {
        var replay = TraceReplay(config: config, idNonce: 1)
        var events: [JSONValue] = []
        for (i, line) in lines.enumerated() {
            replay.feed(line: line, number: i + 1, emit: { events.append(try! JSONParser.parse($0)) }, report: { _ in })
        }
        replay.finish(emit: { events.append(try! JSONParser.parse($0)) }, report: { _ in })
        return events.filter { $0["type"]?.stringValue == "beacond.zone.visit" }
    }

    /// Inside 40 s, then outside: a trace that ends 15 s after (less than the look-ahead) tells
    /// the visit a trace going on for a minute more tells, from the same evidence.
    @Test func aVisitThatEndsNearTheTracesEndIsToldAsALongerTraceTellsIt() throws {
        let inside = Self.lines(at: (2, 5), seconds: 0..<40)
        let short = Self.visits(inside + Self.lines(at: (8, 5), seconds: 40..<55))
        let long = Self.visits(inside + Self.lines(at: (8, 5), seconds: 40..<100))
        #expect(short.count == 1 && long.count == 1, "\(short) \(long)")
        let (s, l) = (try #require(short.first?["data"]), try #require(long.first?["data"]))
        for key in ["entered", "left"] {
            let a = try #require(s[key]?.stringValue.flatMap(RFC3339.parse))
            let b = try #require(l[key]?.stringValue.flatMap(RFC3339.parse))
            #expect(abs((a - b).seconds) <= 1, "\(key): \(a) against \(b)")
        }
        #expect((s["dwell_s"]?.numberValue ?? 0) >= 35)
    }

    @Test func aVisitStillUnderWayAtTheEndIsToldUpToIt() throws {
        let told = Self.visits(Self.lines(at: (2, 5), seconds: 0..<20))
        #expect(told.count == 1)
        let left = try #require(told.first?["data"]?["left"]?.stringValue.flatMap(RFC3339.parse))
        #expect(abs((left - Timestamp.seconds(1_763_805_600)).seconds - 19.8) <= 1.5)
    }

    @Test func aPassShorterThanAVisitIsStillNone() {
        #expect(Self.visits(Self.lines(at: (8, 5), seconds: 0..<10) + Self.lines(at: (2, 5), seconds: 10..<12)).isEmpty)
    }
}
