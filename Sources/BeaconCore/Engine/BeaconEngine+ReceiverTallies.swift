/// How many sightings a receiver has given the engine, and when it was last heard: the
/// per-receiver `/metrics` (`beacond_receiver_sightings_total`, `…_last_heard_age_seconds`)
/// and the floor view's silent receivers.
///
/// Why: a receiver that goes silent (unplugged, out of power, its relay down) leaves the
/// positions of a whole corner of the store worse without a single error anywhere; its age
/// growing is the one sign, and an alert on it is the fix. Kept in the engine's receiver
/// table beside the receiver's name and calibration, under the table's limit
/// (`BeaconEngine.receiverLimit`): one table of receivers, not a second one with names and a
/// limit of its own (issue 54).
public struct ReceiverTally: Sendable, Equatable {
    public var sightings: Int
    public var lastHeard: Timestamp

    public init(sightings: Int, lastHeard: Timestamp) {
        self.sightings = sightings
        self.lastHeard = lastHeard
    }
}

extension BeaconEngine {
    /// Counts a batch against its receivers, a run of one receiver's sightings at a time (a
    /// batch is usually one adapter's): an array update per run, not per sighting. Every
    /// sighting counts, decoded or not: a receiver that hears only strangers is alive. A new
    /// receiver past the table's limit is not counted (nor taken, `ingest`).
    public mutating func tally(_ batch: [Sighting]) {
        for run in Sighting.receiverRanges(batch) {
            let first = batch[run.lowerBound]
            if unconfiguredReceivers >= Self.receiverLimit, !knowsReceiver(first),
                !configuredReceivers.contains(first.receiver)
            {
                continue
            }
            let slot = Int(internReceiver(first))
            receiverHeard[slot].sightings += run.count
            let last = batch[run].lazy.map(\.time).max()!
            receiverHeard[slot].lastHeard = max(receiverHeard[slot].lastHeard, last)
        }
    }

    /// Each receiver that has given the engine a sighting, by name.
    var receiverTallies: [String: ReceiverTally] { Self.byName(receiverTable) }

    /// The receiver table's names and tallies as they stand, slot by slot: what a glance keeps
    /// at every turn, two array references rather than a dictionary built (`byName` builds it
    /// when someone asks).
    public var receiverTable: (names: [String], tallies: [ReceiverTally]) { (receiverNames, receiverHeard) }

    /// The receivers of a `receiverTable` that have given a sighting, by name.
    public static func byName(_ table: (names: [String], tallies: [ReceiverTally])) -> [String: ReceiverTally] {
        var out: [String: ReceiverTally] = [:]
        for (slot, tally) in table.tallies.enumerated() where tally.sightings > 0 { out[table.names[slot]] = tally }
        return out
    }
}
