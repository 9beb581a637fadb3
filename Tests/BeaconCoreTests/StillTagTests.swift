import BeaconConfig
import BeaconCore
import Foundation
import Simulation
import Testing

/// Issue 63 on the simulated store's channel (shadowing, fast fading, 20 % loss) and the
/// injected clock: a pallet put down 1 m outside the entrance's edge for the hour, and one
/// put down elsewhere and picked up after ten minutes. With `motion: parked` a tag that stands
/// is placed by everything heard since it stopped (`StillAnchor`); with `stop_and_go` (the
/// belief alone) its position wanders metres.
@Suite struct StillTagTests {
    static func site(motion: String) -> String {
        StandingNearAnEdgeTests.site
            .replacingOccurrences(of: "motion: stop_and_go", with: "motion: \(motion)")
            .replacingOccurrences(
                of: "  - {id: inside, beacon: {address: \"D0:5E:00:00:00:02\"}}",
                with: "  - {id: inside, beacon: {address: \"D0:5E:00:00:00:02\"}}\n"
                    + "  - {id: picked, beacon: {address: \"D0:5E:00:00:00:03\"}}"
            )
            .replacingOccurrences(
                of: "    - {asset: inside, stands_at: [6, 3]}",
                with: "    - {asset: inside, stands_at: [6, 3]}\n"
                    + "    - {asset: picked, stands_at: [20, 8], picked_up_after: 10m}")
    }

    struct Run {
        /// Per asset: its `asset.position` events, with their times.
        var published: [String: [(at: Timestamp, fix: AssetFix)]] = [:]
        var events: [Event] = []
        /// When the picked-up tag took its first step.
        var pickedAt: Timestamp?
        var motions: [(at: Timestamp, motion: (moving: Bool, since: Timestamp)?)] = []
    }

    static let start = Timestamp.seconds(1_767_225_600)

    static func run(motion: String, seed: UInt64 = 1, minutes: Int64 = 60) throws -> Run {
        let config = try ConfigLoader.load(yaml: site(motion: motion), file: "still.yaml")
        var sim = SiteSimulator(config: config, settings: config.simulation!, seed: seed, start: start)
        var engine = BeaconEngine(configuration: config.engineConfiguration, start: start)
        var run = Run()
        func keep(_ events: [Event]) {
            run.events += events
            for e in events {
                if case let .assetPosition(fix) = e.payload {
                    run.published[fix.asset, default: []].append((e.time, fix))
                }
            }
        }
        while sim.now < start + .minutes(minutes) {
            let step = sim.advance()
            for p in step.truth where p.asset == "picked" && run.pickedAt == nil {
                if abs(p.position.x - 20) + abs(p.position.y - 8) > 0.01 { run.pickedAt = sim.now }
            }
            for s in step.sightings { keep(engine.ingest(s)) }
            keep(engine.advance(to: sim.now))
            run.motions.append((sim.now, engine.tracker?.motion(of: "outside")))
        }
        return run
    }

    static func distance(_ p: Point, _ x: Double, _ y: Double) -> Double {
        ((p.x - x) * (p.x - x) + (p.y - y) * (p.y - y)).squareRoot()
    }

    /// The hour of the pallet 1 m outside the entrance: after its first two minutes every
    /// position published is within a metre of where it stands, and after the first within
    /// 1.5 m while its anchor gathers (measured: 1.37 m at 96 s, 0.87 m at 159 s, 0.45 m from
    /// 210 s to the hour's end, three publishes in all); never in the entrance. The belief
    /// alone publishes hundreds, most of them more than a metre off.
    @Test func aParkedTagsPublishedPositionsStayWithinAMetreForAnHour() throws {
        let parked = try Self.run(motion: "parked")
        let after = parked.published["outside", default: []].filter { $0.at - Self.start > .minutes(1) }
        let trace = after.map { "\(Int(($0.at - Self.start).seconds)) s: \(Self.distance($0.fix.position, 8, 3)) m" }
        #expect(after.allSatisfy { Self.distance($0.fix.position, 8, 3) <= 1.5 }, "\(trace)")
        #expect(
            after.filter { $0.at - Self.start > .minutes(2) }.allSatisfy { Self.distance($0.fix.position, 8, 3) <= 1 },
            "\(trace)")
        #expect(after.count <= 20, "\(trace)")
        #expect(after.allSatisfy { $0.fix.zones.isEmpty }, "placed in the entrance")
        // Nothing crossed. The issue's target: at most 2 `zone.visit`s in the hour (the belief
        // alone: 19.5 an hour a tag on the bench). The seconds before the anchor has settled
        // are the belief's (measured: outside entered at 11 s, left at 22 s, its visit told at
        // 67 s, then nothing); after them, a departure of the readings taken for a move lets
        // the tag inside out for 14 s and 175 s (measured), not yet nothing.
        func told(_ asset: String, after: TimeSpan = .seconds(0)) -> [String] {
            parked.events.compactMap {
                guard $0.time - Self.start > after else { return nil }
                switch $0.payload {
                case let .zone(alert) where alert.asset == asset: return "zone.\(alert.condition.rawValue)"
                case let .zoneVisit(visit) where visit.asset == asset: return "zone.visit"
                default: return nil
                }
            }
        }
        for asset in ["outside", "inside"] {
            #expect(told(asset).filter { $0 == "zone.visit" }.count <= 2, "\(asset): \(told(asset))")
        }
        #expect(told("outside", after: .minutes(2)).isEmpty, "\(told("outside"))")
        #expect(told("inside", after: .minutes(2)).count <= 6, "\(told("inside"))")
        withKnownIssue("a departure of the readings is taken for a move now and then (issue 63)") {
            #expect(told("inside", after: .minutes(2)).isEmpty, "\(told("inside"))")
        }
        let wandering = try Self.run(motion: "stop_and_go", minutes: 10)
        let theirs = wandering.published["outside", default: []].filter { $0.at - Self.start > .minutes(1) }
        let off = theirs.filter { Self.distance($0.fix.position, 8, 3) > 1 }.count
        #expect(off * 2 > theirs.count && theirs.count > 50, "stop_and_go: \(off) of \(theirs.count) more than 1 m off")
    }

    /// Its accuracy narrows as it stands: the last publish's `accuracy_m` (measured 1.16 m)
    /// under half the belief's alone, and `moving: false` since it was first heard standing.
    @Test func aParkedTagSaysItStandsAndSinceWhen() throws {
        let parked = try Self.run(motion: "parked", minutes: 20)
        let last = try #require(parked.published["outside"]?.last?.fix)
        #expect(last.moving == false)
        #expect(last.accuracy < 1.5, "accuracy \(last.accuracy) m")
        let motion = try #require(parked.motions.last?.motion)
        #expect(motion.moving == false)
        #expect(motion.since - Self.start < .seconds(5), "standing since \(motion.since - Self.start)")
        let line = try #require(
            parked.events.last { if case .assetPosition(let f) = $0.payload { f.asset == "outside" } else { false } }
        )
        #expect(CloudEvent.text(line, id: "e1", gatewayID: "test").contains(#""moving":false"#))
        let wandering = try Self.run(motion: "stop_and_go", minutes: 5)
        let theirs = try #require(wandering.published["outside"]?.last?.fix)
        #expect(theirs.moving == nil)
        #expect(last.accuracy * 2 < theirs.accuracy, "\(last.accuracy) m against the belief's \(theirs.accuracy) m")
    }

    /// Picked up after ten minutes: followed within 15 s of its first step (measured 10 s
    /// here; 10–57 s over the bench's twelve pick-ups, BENCHMARKS.md), told `moving: true`.
    /// The issue's 5 s is not met: the readings tell a walk from shadowing only once the tag
    /// is metres away.
    @Test func aParkedTagPickedUpIsFollowed() throws {
        let parked = try Self.run(motion: "parked", minutes: 12)
        let picked = try #require(parked.pickedAt)
        let followed = parked.published["picked", default: []].first {
            $0.at >= picked && Self.distance($0.fix.position, 20, 8) >= 2
        }
        let after = try #require(followed, "never followed").at - picked
        #expect(after <= .seconds(15), "followed \(after) after the first step")
        #expect(followed?.fix.moving == true)
        withKnownIssue("a walk is found once the tag is metres away (issue 63)") {
            #expect(after <= .seconds(5), "followed \(after) after the first step")
        }
    }

    /// A reload that leaves the receivers and positioning as they were keeps a standing tag's
    /// anchor: still `moving: false` since the same time, at the same place, the tick after.
    @Test func aReloadKeepsAStandingTagsAnchor() throws {
        let yaml = Self.site(motion: "parked")
        let config = try ConfigLoader.load(yaml: yaml, file: "still.yaml")
        var sim = SiteSimulator(config: config, settings: config.simulation!, seed: 1, start: Self.start)
        var engine = BeaconEngine(configuration: config.engineConfiguration, start: Self.start)
        func run(until minutes: Int64) {
            while sim.now < Self.start + .minutes(minutes) {
                for s in sim.advance().sightings { _ = engine.ingest(s) }
                _ = engine.advance(to: sim.now)
            }
        }
        run(until: 5)
        let before = try #require(engine.tracker?.motion(of: "outside"))
        let placed = try #require(engine.tracker?.fixes.first { $0.id == "outside" }?.fix?.position)
        #expect(before.moving == false)
        let more = yaml.replacingOccurrences(
            of: "zones:\n",
            with: "zones:\n  - {id: office, level: 0, polygon: [[20, 10], [30, 10], [30, 20], [20, 20]]}\n")
        let reloaded = try ConfigLoader.load(yaml: more, file: "still.yaml")
        let configuration = reloaded.engineConfiguration
        let site = configuration.site
        let changed = engine.reconfigureSite(site, calibrations: configuration.receivers, at: sim.now)
        #expect(changed)
        run(until: 6)
        let after = try #require(engine.tracker?.motion(of: "outside"))
        #expect(after.moving == false && after.since == before.since, "\(before) then \(after)")
        let now = try #require(engine.tracker?.fixes.first { $0.id == "outside" }?.fix?.position)
        #expect(Self.distance(now, placed.x, placed.y) < 0.3, "\(placed) then \(now)")
    }
}
