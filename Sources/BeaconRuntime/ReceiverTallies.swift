import BeaconCore

/// How many sightings each receiver has given the engine, and when it was last heard: the
/// per-receiver `/metrics` (`beacond_receiver_sightings_total`, `…_last_heard_age_seconds`).
///
/// Why: a receiver that goes silent (unplugged, out of power, its relay down) leaves the
/// positions of a whole corner of the store worse without a single error anywhere; its age
/// growing is the one sign, and an alert on it is the fix. Counted on the engine's thread as
/// batches are taken, a run of one receiver's sightings at a time (a batch is usually one
/// adapter's), so it costs a string comparison per sighting, not a dictionary update.
public struct ReceiverTallies: Sendable {
    public struct Tally: Sendable, Equatable {
        public var sightings: Int
        public var lastHeard: Timestamp
    }

    /// Names kept at most, as the engine's own receiver table: relays inventing names cannot
    /// grow it.
    public static let limit = 256
    public private(set) var byReceiver: [String: Tally] = [:]

    public init() {}

    public mutating func count(_ batch: [Sighting]) {
        var start = 0
        while start < batch.count {
            let name = batch[start].receiver
            var end = start + 1
            var last = batch[start].time
            while end < batch.count, batch[end].receiver == name {
                last = max(last, batch[end].time)
                end += 1
            }
            add(name, end - start, at: last)
            start = end
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
