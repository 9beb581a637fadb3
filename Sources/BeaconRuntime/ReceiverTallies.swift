import BeaconCore

/// How many sightings each receiver has given the engine, and when it was last heard: the
/// per-receiver `/metrics` (`beacond_receiver_sightings_total`, `…_last_heard_age_seconds`).
///
/// Why: a receiver that goes silent (unplugged, out of power, its relay down) leaves the
/// positions of a whole corner of the store worse without a single error anywhere; its age
/// growing is the one sign, and an alert on it is the fix. Counted on the engine's thread as
/// batches are taken, a run of one receiver's sightings at a time (a batch is usually one
/// adapter's), so it costs a comparison per sighting, not a dictionary update.
public struct ReceiverTallies: Sendable {
    public struct Tally: Sendable, Equatable {
        public var sightings: Int
        public var lastHeard: Timestamp
    }

    /// Names kept at most (fewer than the engine's 1,024 receivers: past it, a made-up name
    /// is not tallied): relays inventing names cannot grow it.
    public static let limit = 256
    public private(set) var byReceiver: [String: Tally] = [:]

    public init() {}

    public mutating func count(_ batch: [Sighting]) {
        for run in Sighting.receiverRuns(batch) {
            let last = batch[run.range].lazy.map(\.time).max()!
            add(run.name, run.range.count, at: last)
        }
    }

    private mutating func add(_ name: String, _ n: Int, at time: Timestamp) {
        if var tally = byReceiver[name] {
            tally.sightings += n
            tally.lastHeard = max(tally.lastHeard, time)
            byReceiver[name] = tally
        } else if byReceiver.count < Self.limit {
            byReceiver[name] = Tally(sightings: n, lastHeard: time)
        }
    }
}
