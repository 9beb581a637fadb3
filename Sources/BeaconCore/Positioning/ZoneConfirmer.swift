/// Decides whether an asset is in a zone for its alarms (`alarms[].confirm`, SPEC §10): a
/// crossing by the edge rule becomes an enter or an exit only once the `confirm` after it
/// have borne it out, and is told then, with the time it crossed.
///
/// Why: no rule on the instant is right about a zone near its edge (the estimate wanders 2 m
/// for seconds; BENCHMARKS.md "The live alerts' ceiling"), so a store that acts on each
/// second's membership gets an alert for every wobble. Time buys the truth: Bermuda lets a
/// challenger take an area after ~5 s of samples, Android's beacon library holds an exit
/// 10 s. A crossing is borne out when the edge rule said the new state for at least
/// `share` of the window and still says it at its end: a wobble over and back within the
/// window is nothing, a real crossing with a wobble back inside it still counts.
/// `confirm: 0s` decides at the crossing itself (the edge rule as it was).
public struct ZoneConfirmer: Sendable, Equatable {
    /// A decided change of membership: in or out, and when the asset crossed.
    public struct Change: Sendable, Equatable {
        public var inside: Bool
        public var crossedAt: Timestamp
    }

    public var confirm: TimeSpan
    /// Of the window, how much the new state must have held (BENCHMARKS.md "Confirmed alerts").
    public var share: Double
    /// The decided membership, and when the asset crossed into it.
    public private(set) var inside = false
    public private(set) var since: Timestamp
    /// The edge rule's last say, when, and since when it has said it.
    private var raw = false
    private var rawAt: Timestamp
    private var rawSince: Timestamp
    /// The crossing being weighed: when, and how long of the time since the edge rule agreed.
    private var pending: Pending?

    private struct Pending: Sendable, Equatable {
        var crossedAt: Timestamp
        var agreedNs: Int64 = 0
        var totalNs: Int64 = 0
        /// Of the window so far, how much the new side held (all of it before any time passed).
        var held: Double { totalNs == 0 ? 1 : Double(agreedNs) / Double(totalNs) }
    }

    public init(confirm: TimeSpan, share: Double = 0.5, at t: Timestamp) {
        self.confirm = confirm
        self.share = share
        since = t
        rawAt = t
        rawSince = t
    }

    /// A crossing is being weighed (it will be told, or not, within `confirm`).
    public var isWeighing: Bool { pending != nil }

    /// The edge rule says `inside` at `t`; returns the change it decides, if any.
    public mutating func observe(inside now: Bool, at t: Timestamp) -> Change? {
        weigh(until: t)
        if now != raw { rawSince = t }
        (raw, rawAt) = (now, t)
        if pending == nil, now != inside { pending = Pending(crossedAt: t) }
        guard let p = pending, t - p.crossedAt >= confirm else { return nil }
        pending = nil
        guard now != inside else { return nil }
        guard p.held >= share else {
            // Not borne out; the edge rule says it again, so it is weighed from when it
            // began to (all of that time agreeing): decided at once if that is `confirm` ago.
            let span = (t - rawSince).nanoseconds
            pending = Pending(crossedAt: rawSince, agreedNs: span, totalNs: span)
            guard span >= confirm.nanoseconds else { return nil }
            pending = nil
            (inside, since) = (now, rawSince)
            return Change(inside: now, crossedAt: rawSince)
        }
        (inside, since) = (now, p.crossedAt)
        return Change(inside: now, crossedAt: p.crossedAt)
    }

    /// The end of the evidence (a replayed trace's last record): a crossing being weighed is
    /// decided on what was seen of its window, as far as it goes.
    public mutating func finish(at t: Timestamp) -> Change? {
        weigh(until: t)
        guard let p = pending else { return nil }
        pending = nil
        guard raw != inside, p.held >= share else { return nil }
        (inside, since) = (raw, p.crossedAt)
        return Change(inside: raw, crossedAt: p.crossedAt)
    }

    /// Set without weighing: the asset went silent (out at once), a restart restored it.
    public mutating func set(inside now: Bool, at t: Timestamp) {
        (raw, rawAt, rawSince, pending) = (now, t, t, nil)
        if now != inside { (inside, since) = (now, t) }
    }

    /// The time since the edge rule's last say counts for what it said, in the crossing weighed.
    private mutating func weigh(until t: Timestamp) {
        guard var p = pending else { return }
        let span = (t - rawAt).nanoseconds
        p.totalNs += span
        if raw != inside { p.agreedNs += span }
        pending = p
    }

    mutating func shift(by d: TimeSpan) {
        since = since + d
        rawAt = rawAt + d
        rawSince = rawSince + d
        if let p = pending { pending?.crossedAt = p.crossedAt + d }
    }
}
