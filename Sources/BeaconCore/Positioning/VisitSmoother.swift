#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// How a stay in a zone becomes one visit (SPEC §10, `analytics:`): a step outside shorter
/// than `rejoin` does not end it, one shorter than `minVisit` is not a visit, and it is told
/// at most `lag` after it ended.
public struct VisitRules: Sendable, Equatable {
    /// `analytics.visit_lag`: 40 s. The smoother looks `lag − rejoin` (30 s) past each second
    /// before deciding it; longer gained nothing on the simulated store (BENCHMARKS.md).
    public var lag = TimeSpan.seconds(40)
    /// `analytics.rejoin`: 10 s, a shopper stepping back into the aisle they just left.
    public var rejoin = TimeSpan.seconds(10)
    /// `analytics.min_visit`: 5 s, what retail analytics count an area visit from.
    public var minVisit = TimeSpan.seconds(5)

    public init() {}

    /// How far past a second the smoother looks before it decides it.
    var lookAhead: TimeSpan { TimeSpan(nanoseconds: max(lag.nanoseconds - rejoin.nanoseconds, 0)) }

    /// How long after its time a visit's enter or exit (or a live change) is held before the
    /// analytics store it: a visit's enter is known at most `lag + minVisit` after it, so
    /// held that long every kind reaches the store in the order of its times, and an hour is
    /// rolled that long after it ends, with all its visits (SPEC §10).
    public var settleTime: TimeSpan { TimeSpan(nanoseconds: lag.nanoseconds + minVisit.nanoseconds) }
}

/// What a visit smoother decided: a visit began (known to last `minVisit`), or one ended.
enum VisitChange: Sendable, Equatable {
    case began(Timestamp)
    case ended(entered: Timestamp, left: Timestamp)
}

/// A visit that has closed: `zone.visit`'s data.
public struct ZoneVisit: Sendable, Equatable {
    public var asset: String
    public var zone: String
    public var entered: Timestamp
    public var left: Timestamp

    public init(asset: String, zone: String, entered: Timestamp, left: Timestamp) {
        self.asset = asset
        self.zone = zone
        self.entered = entered
        self.left = left
    }

    public var dwell: TimeSpan { left - entered }
}

/// Decides one asset's visits to one zone from how much of its belief lies inside, second by
/// second, with a two-state hidden Markov model (inside, outside) smoothed over a fixed lag.
///
/// Why: the point estimate wanders 1–2 m on a store, so a visit cut by its edge splits into
/// pieces and loses its dwell (1.14 × the true visits at 0.76 × their dwell, 18 % of long
/// stays split, BENCHMARKS.md "Zones against the truth"). The belief's mass says how sure the
/// locator is, and a switch between inside and outside is rare (1 % a second), so a wobble
/// out and back is seen for what it is. A second's mass m counts as the likelihood ratio
/// ((m / θ) / ((1 − m) / (1 − θ)))^γ: γ = 0.5 because successive beliefs share most of their
/// evidence, and θ = 0.2 because a belief 2 m wide rarely puts more than a third of itself in
/// a zone the tag is 1 m into (46 % of the store's true visits never go 2 m deep). Each second
/// is decided once the 30 s after it have been heard; the bench found 15 s and 60 s the same.
struct VisitSmoother: Sendable, Equatable {
    static let switchProbability = 0.01
    static let evidenceWeight = 0.5
    static let evenMass = 0.2

    struct Step: Sendable, Equatable {
        var time: Timestamp
        /// The likelihoods of the second's evidence, inside and outside (1, 1: none).
        var inside: Double
        var outside: Double
        /// P(inside | evidence up to this second).
        var forward: Double
    }

    /// The seconds not yet decided, oldest first.
    private(set) var window: [Step] = []
    private var forward = 0.0
    /// The visit being decided: when it began, and when it was last seen leaving.
    private var entered: Timestamp?
    private var leftAt: Timestamp?
    /// Whether the visit under way has been told as begun (it will be a visit).
    private var told = false

    /// The visit under way that has been told as begun, since its enter.
    var toldVisit: Timestamp? { told ? entered : nil }

    /// True when nothing is pending: no visit open, no second undecided.
    var isIdle: Bool { window.isEmpty && entered == nil }

    /// Takes the mass inside at `t` (nil: no fix this second, so no evidence) and returns
    /// what that decided: a visit begun, or closed (one not told as begun is told first).
    mutating func observe(mass: Double?, at t: Timestamp, rules: VisitRules) -> [VisitChange] {
        let q = Self.switchProbability
        let predicted = forward * (1 - q) + (1 - forward) * q
        var step = Step(time: t, inside: 1, outside: 1, forward: predicted)
        if let mass {
            let m = min(max(mass, 0.001), 0.999)
            step.inside = pow(m / Self.evenMass, Self.evidenceWeight)
            step.outside = pow((1 - m) / (1 - Self.evenMass), Self.evidenceWeight)
            let a = predicted * step.inside
            step.forward = a / (a + (1 - predicted) * step.outside)
        }
        forward = step.forward
        // Far from the zone with nothing pending: nothing to keep.
        if isIdle, forward < 0.01, step.inside <= step.outside { return [] }
        window.append(step)
        var changes: [VisitChange] = []
        while let first = window.first, t - first.time >= rules.lookAhead {
            window.removeFirst()
            decide(first, inside: smoothedInside(first), rules: rules, into: &changes)
        }
        return changes
    }

    /// P(inside) at the oldest undecided second given every second after it in the window.
    private func smoothedInside(_ first: Step) -> Bool {
        let q = Self.switchProbability
        var (bIn, bOut) = (1.0, 1.0)
        for s in window.reversed() {
            let nIn = (1 - q) * s.inside * bIn + q * s.outside * bOut
            let nOut = q * s.inside * bIn + (1 - q) * s.outside * bOut
            let sum = nIn + nOut
            (bIn, bOut) = (nIn / sum, nOut / sum)
        }
        return first.forward * bIn > (1 - first.forward) * bOut
    }

    private mutating func decide(_ step: Step, inside: Bool, rules: VisitRules, into changes: inout [VisitChange]) {
        if inside {
            let start = entered ?? step.time
            entered = start
            leftAt = nil
            if !told, step.time - start >= rules.minVisit {
                told = true
                changes.append(.began(start))
            }
            return
        }
        guard entered != nil else { return }
        let out = leftAt ?? step.time
        leftAt = out
        guard step.time - out >= rules.rejoin else { return }
        end(at: out, rules: rules, into: &changes)
    }

    /// Ends the visit under way at `left`: told (its beginning first, if not yet) when it
    /// lasted `minVisit`.
    private mutating func end(at left: Timestamp, rules: VisitRules, into changes: inout [VisitChange]) {
        guard let start = entered else { return }
        if told || left - start >= rules.minVisit {
            if !told { changes.append(.began(start)) }
            changes.append(.ended(entered: start, left: left))
        }
        (entered, leftAt, told) = (nil, nil, false)
    }

    /// The asset is gone (lost, or its zone removed): a visit open ends at `t`, decided now.
    mutating func close(at t: Timestamp, rules: VisitRules) -> [VisitChange] {
        var changes: [VisitChange] = []
        for step in window { decide(step, inside: step.forward > 0.5, rules: rules, into: &changes) }
        window = []
        forward = 0
        end(at: leftAt ?? t, rules: rules, into: &changes)
        return changes
    }

    /// The end of the evidence (a replayed trace's last record): the seconds still undecided
    /// are decided with what followed them, as far as it goes, and a visit still open ends at
    /// its last step out or at `t`. Without it, a recording's last visits — those whose
    /// look-ahead reached past its end — were never told.
    mutating func finish(at t: Timestamp, rules: VisitRules) -> [VisitChange] {
        var changes: [VisitChange] = []
        while !window.isEmpty {
            let first = window.removeFirst()
            decide(first, inside: smoothedInside(first), rules: rules, into: &changes)
        }
        forward = 0
        end(at: leftAt ?? t, rules: rules, into: &changes)
        return changes
    }

    /// After a restart, for an asset the saved live state has inside since `since`, or that
    /// the analytics counted on a visit since then (`told`): the visit is open from then, and
    /// the belief starts sure of it (the evidence after the restart ends it as any other). One
    /// not counted yet is told as begun, from `since`, once it has lasted `minVisit`.
    mutating func resume(since: Timestamp, told: Bool) {
        window = []
        forward = 0.99
        (entered, leftAt, self.told) = (since, nil, told)
    }

    /// After a start's counting reached `floor` in this zone: a visit resumed from the saved
    /// live state and not yet told as begun begins no earlier, so that its enter, told when it
    /// has lasted `minVisit`, is stored in order and counted as `zone.visit` tells it.
    mutating func anchor(from floor: Timestamp) {
        guard !told, let start = entered, start < floor else { return }
        entered = floor
        if let out = leftAt, out < floor { leftAt = floor }
    }

    mutating func shift(by d: TimeSpan) {
        for i in window.indices { window[i].time = window[i].time + d }
        entered = entered.map { $0 + d }
        leftAt = leftAt.map { $0 + d }
    }
}
