import BeaconCore
import Foundation
import Synchronization
import Testing

@testable import BeaconRuntime

/// Zone transitions go to the store apart from the engine's snapshot (issue 54): released every
/// tick in a busy store, each forced a full snapshot of every region and asset while they
/// rode in it. The snapshot keeps its own pace: at a state-changing event, else every
/// `persistInterval`.
@Suite struct TransitionSaveTests {
    static let t0 = Timestamp.seconds(1_763_805_600)
    static let corners = [
        SiteReceiver(id: "a", position: Point(x: 0, y: 0), level: 0),
        SiteReceiver(id: "b", position: Point(x: 10, y: 0), level: 0),
        SiteReceiver(id: "c", position: Point(x: 10, y: 10), level: 0),
        SiteReceiver(id: "d", position: Point(x: 0, y: 10), level: 0),
    ]

    static func site() -> SiteConfiguration {
        var positioning = PositioningSettings()
        positioning.publishInterval = .seconds(1)
        let left = ZoneDefinition(
            id: "left",
            shape: .polygon(
                level: 0, points: [Point(x: 0, y: 0), Point(x: 5, y: 0), Point(x: 5, y: 10), Point(x: 0, y: 10)]))
        return SiteConfiguration(
            receivers: corners, assets: [AssetDefinition(id: "cart", tag: .address("AA:00:00:00:00:01"))],
            zones: [left], alarms: [], positioning: positioning)
    }

    /// The cart heard at (2, 5), inside `left`, five times a second by every corner.
    static func heard(at t: Timestamp) -> [Sighting] {
        (0..<5).flatMap { k in
            corners.map { r in
                let d = max(
                    0.1,
                    ((2 - r.position.x) * (2 - r.position.x) + (5 - r.position.y) * (5 - r.position.y)).squareRoot())
                return Sighting(
                    time: t - .milliseconds(200 * Int64(k)), receiver: r.id, address: "AA:00:00:00:00:01",
                    rssi: Int((-59 - 20 * log10(d)).rounded()))
            }
        }.sorted { $0.time < $1.time }
    }

    struct Commit {
        var at: Timestamp
        var state: Bool
        var transitions: Int
    }

    @Test func transitionsAreSavedWithoutForcingASnapshot() {
        let calibrations = Dictionary(
            uniqueKeysWithValues: Self.corners.map { ($0.id, ReceiverCalibration(rssiAt1m: -59)) })
        var engine = BeaconEngine(
            configuration: EngineConfiguration(receivers: calibrations, site: Self.site()), start: Self.t0)
        engine.recordsZoneTransitions = true
        let commits = Mutex<[Commit]>([])
        let now = Mutex(Self.t0)
        let live = LiveEngine(engine: engine, clock: { now.withLock { $0 } }, savingState: true) {
            _, state, transitions in
            let at = now.withLock { $0 }
            commits.withLock { $0.append(Commit(at: at, state: state != nil, transitions: transitions.count)) }
        }
        for second in 0...90 {
            let t = Self.t0 + .seconds(Int64(second))
            now.withLock { $0 = t }
            live.submit(.sightings(Self.heard(at: t)))
            live.turn(now: t)
        }
        let all = commits.withLock { $0 }
        let withTransitions = all.filter { $0.transitions > 0 }
        #expect(!withTransitions.isEmpty, "the cart's visit to `left` was released")
        // Every snapshot is the interval's (no state-changing event here): none closer than
        // `persistInterval` to the one before, transitions or not.
        let snapshots = all.filter(\.state).map(\.at)
        #expect(zip(snapshots, snapshots.dropFirst()).allSatisfy { $1 - $0 >= LiveEngine.persistInterval })
        #expect(
            withTransitions.contains { !$0.state },
            "\(withTransitions.map { ($0.at - Self.t0).seconds }) \(snapshots.map { ($0 - Self.t0).seconds }) a turn's transitions were saved without a snapshot"
        )
    }
}
