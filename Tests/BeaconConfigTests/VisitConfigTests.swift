import BeaconCore
import Testing

@testable import BeaconConfig

/// SPEC §10's `analytics.visit_lag`, `rejoin` and `min_visit`, as the engine takes them.
@Suite struct VisitConfigTests {
    static func errors(_ yaml: String) -> [String] {
        do {
            _ = try ConfigLoader.load(yaml: yaml, file: "beacond.yaml")
            return []
        } catch { return error.errors.map(\.description) }
    }

    @Test func theDefaultsAndAChoiceReachTheTracker() throws {
        let plain = try ConfigLoader.load(yaml: "gateway: {id: g}\n", file: "beacond.yaml")
        #expect(plain.siteModel.visits == VisitRules())
        #expect(plain.analytics.visits.lag == .seconds(40) && plain.analytics.visits.rejoin == .seconds(10))
        #expect(plain.analytics.visits.minVisit == .seconds(5))
        let set = try ConfigLoader.load(
            yaml: "analytics:\n  visit_lag: 2m\n  rejoin: 30s\n  min_visit: 1m\n", file: "beacond.yaml")
        #expect(set.siteModel.visits.lag == .minutes(2) && set.siteModel.visits.rejoin == .seconds(30))
        #expect(set.siteModel.visits.minVisit == .minutes(1))
    }

    @Test func aLagShorterThanRejoinIsRefusedWithItsReason() {
        #expect(
            Self.errors("analytics:\n  visit_lag: 20s\n  rejoin: 30s\n") == [
                "beacond.yaml:2:3: analytics.visit_lag: must be at least analytics.rejoin (30s): "
                    + "a visit is told once a step out has lasted that long"
            ])
        #expect(
            Self.errors("analytics:\n  rejoin: 10m\n") == [
                #"beacond.yaml:2:11: analytics.rejoin: must be between 0s and 5m, got "10m""#
            ])
    }
}
