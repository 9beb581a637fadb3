import Testing

@testable import BeaconCore

/// SPEC §10's visits from the belief's mass inside a zone, second by second.
@Suite struct VisitSmootherTests {
    static let t0 = Timestamp.seconds(2_000_000)
    static let rules = VisitRules()

    /// Feeds one mass a second from `t0`; the visits told, as seconds from `t0`, and when.
    static func visits(_ masses: [Double?], rules: VisitRules = rules) -> [(entered: Int, left: Int, toldAt: Int)] {
        changes(masses, rules: rules).compactMap { change, s in
            guard case let .ended(entered, left) = change else { return nil }
            return (Int((entered - t0).seconds), Int((left - t0).seconds), s)
        }
    }

    /// Every change decided, with the second it was decided at.
    static func changes(_ masses: [Double?], rules: VisitRules = rules) -> [(VisitChange, Int)] {
        var smoother = VisitSmoother()
        var told: [(VisitChange, Int)] = []
        for (s, m) in masses.enumerated() {
            told += smoother.observe(mass: m, at: t0 + .seconds(Int64(s)), rules: rules).map { ($0, s) }
        }
        return told
    }

    static func repeated(_ m: Double?, _ seconds: Int) -> [Double?] { Array(repeating: m, count: seconds) }

    @Test func aStayIsToldOnceWithinTheLagOfItsEnd() {
        let told = Self.visits(Self.repeated(0.02, 20) + Self.repeated(0.95, 60) + Self.repeated(0.02, 80))
        #expect(told.count == 1)
        guard let v = told.first else { return }
        // Decided within two seconds of the truth's edges (the evidence turns in one second).
        #expect(abs(v.entered - 20) <= 2 && abs(v.left - 80) <= 2, "\(v)")
        // Told once `rejoin` has passed with the smoother's look-ahead: at most `visit_lag` late.
        #expect(v.toldAt - v.left <= Int(Self.rules.lag.seconds), "\(v)")
    }

    /// Today's edge rule splits this into two visits and loses the middle; the smoother does
    /// not. For the analytics (SPEC §10) the visit is told as begun, at its own enter, once it
    /// has lasted `min_visit` — within `settleTime` of that enter, long before it ends — and
    /// then ended: once each.
    @Test func aShortStepOutDoesNotSplitAVisit() {
        let masses =
            Self.repeated(0.02, 10) + Self.repeated(0.9, 60) + Self.repeated(0.2, 6) + Self.repeated(0.9, 60)
            + Self.repeated(0.02, 80)
        let told = Self.changes(masses)
        guard told.count == 2, case let .began(entered) = told[0].0, case let .ended(same, left) = told[1].0 else {
            Issue.record("one visit, begun then ended: \(told)")
            return
        }
        let (enteredAt, leftAt) = (Int((entered - Self.t0).seconds), Int((left - Self.t0).seconds))
        #expect(entered == same && abs(enteredAt - 10) <= 2 && abs(leftAt - 136) <= 2, "\(told)")
        #expect(told[0].1 - enteredAt <= Int(Self.rules.settleTime.seconds), "begun at \(told[0].1)")
        #expect(told[0].1 < 136, "told as begun while it goes on")
    }

    @Test func aStepOutLongerThanRejoinEndsTheVisit() {
        let masses =
            Self.repeated(0.02, 10) + Self.repeated(0.95, 60) + Self.repeated(0.02, 40)
            + Self.repeated(0.95, 60) + Self.repeated(0.02, 80)
        #expect(Self.visits(masses).count == 2)
    }

    /// A belief that keeps most of itself outside (a tag standing outside, its belief brushing
    /// the zone) makes no visit, however long it lasts.
    @Test func aBeliefMostlyOutsideMakesNoVisit() {
        var masses: [Double?] = []
        for s in 0..<3600 { masses.append(s % 7 < 3 ? 0.18 : 0.05) }
        #expect(Self.visits(masses + Self.repeated(0.02, 80)).isEmpty)
    }

    @Test func aPassShorterThanTheMinimumIsNoVisit() {
        let told = Self.changes(Self.repeated(0.02, 10) + Self.repeated(0.99, 3) + Self.repeated(0.02, 80))
        #expect(told.isEmpty, "neither begun nor ended: \(told)")
    }

    /// Seconds without a fix keep the visit: no evidence is not evidence of leaving.
    @Test func secondsWithoutAFixDoNotEndAVisit() {
        let masses =
            Self.repeated(0.02, 10) + Self.repeated(0.95, 30) + Self.repeated(nil, 15)
            + Self.repeated(0.95, 30) + Self.repeated(0.02, 80)
        let told = Self.visits(masses)
        #expect(told.count == 1 && told.first.map { $0.left - $0.entered >= 70 } == true, "\(told)")
    }

    @Test func closingAtALossEndsTheOpenVisit() {
        var smoother = VisitSmoother()
        for s in 0..<60 { _ = smoother.observe(mass: 0.95, at: Self.t0 + .seconds(Int64(s)), rules: Self.rules) }
        let closed = smoother.close(at: Self.t0 + .seconds(90), rules: Self.rules)
        guard case let .ended(entered, left)? = closed.last else {
            Issue.record("\(closed)")
            return
        }
        #expect((left - entered).seconds >= 55, "\(closed)")
        #expect(smoother.isIdle && smoother.toldVisit == nil)
    }

    /// A restart in the middle of a stay: the saved live state says inside since second 0; the
    /// visit told after it is one, from second 0, not one begun at the restart.
    @Test func aVisitResumedAfterARestartIsOneVisit() {
        var smoother = VisitSmoother()
        smoother.resume(since: Self.t0, told: true)
        var told: [(Timestamp, Timestamp)] = []
        let masses = Self.repeated(0.95, 40) + Self.repeated(0.02, 80)
        for (s, m) in masses.enumerated() {
            for case let .ended(entered, left) in smoother.observe(
                mass: m, at: Self.t0 + .seconds(Int64(100 + s)), rules: Self.rules)
            {
                told.append((entered, left))
            }
        }
        #expect(told.count == 1, "ended once, never begun again")
        #expect(told.first.map { $0.0 == Self.t0 && abs(($0.1 - Self.t0).seconds - 140) <= 2 } == true, "\(told)")
    }

    /// Far from every zone nothing is kept: an asset costs nothing per zone it is not near.
    @Test func farFromTheZoneNothingIsKept() {
        var smoother = VisitSmoother()
        for s in 0..<100 { _ = smoother.observe(mass: 0, at: Self.t0 + .seconds(Int64(s)), rules: Self.rules) }
        #expect(smoother.isIdle && smoother.window.isEmpty)
    }
}
