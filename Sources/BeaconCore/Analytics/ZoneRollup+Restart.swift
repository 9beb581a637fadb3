/// What a start does to the counting after a `kill -9` (issue 61, M3, M5): the changes held to
/// settle were lost, and whatever is stored from now on must agree with the `zone.visit` events
/// the history holds and come in the order of its times, or the counting (which holds each
/// zone's transitions between its previous one's time and the hour's end) shortens visits to
/// a second.
extension ZoneRollup {
    /// The counted visits a start closes or resumes.
    public struct Restart: Sendable, Equatable {
        /// Counted visits the engine goes on with (`BeaconEngine.resumeCountedVisits`).
        public var resumed: [ZoneHours.OpenVisit] = []
        /// Counted visits the history has told already: each closed at its told `left`.
        public var closed: [ZoneVisit] = []
        /// Visits the history has told that were never counted: their enter and exit both
        /// settling at the kill.
        public var uncounted: [ZoneVisit] = []

        /// What the counting takes of them: the closed ones' exits, the uncounted ones whole.
        public var transitions: [ZoneTransition] {
            closed.map { ZoneTransition(zone: $0.zone, asset: $0.asset, entered: false, time: $0.left, visit: true) }
                + uncounted.flatMap { v in
                    [
                        ZoneTransition(zone: v.zone, asset: v.asset, entered: true, time: v.entered, visit: true),
                        ZoneTransition(zone: v.zone, asset: v.asset, entered: false, time: v.left, visit: true),
                    ]
                }
        }
    }

    /// Sorts the counted open visits: a visit whose `zone.visit` is in `told` (its asset, zone
    /// and enter, to the millisecond the event carries) was decided before the kill, its exit
    /// lost while it settled; resumed, it would be told again under a new id with its dwell
    /// running on to the restart. Every other is resumed. A told visit that entered since
    /// `countedFrom` (the hour the counting has not rolled: every enter since is in `enters`)
    /// and is neither open nor among those enters lost both its changes: counted whole.
    public static func restart(
        counted: [ZoneHours.OpenVisit], told: [ZoneVisit], enters: [ZoneTransition] = [],
        countedFrom: Timestamp = Timestamp(nanoseconds: .max)
    ) -> Restart {
        // By asset, zone and enter to the millisecond (the event's precision, floored as
        // `RFC3339.format` floors): a start after a busy hour matches thousands against tens
        // of thousands of stored changes.
        struct Key: Hashable {
            var asset: String
            var zone: String
            var millisecond: Int64
            init(_ asset: String, _ zone: String, _ t: Timestamp) {
                (self.asset, self.zone) = (asset, zone)
                let ns = t.nanoseconds
                millisecond = ns >= 0 ? ns / 1_000_000 : (ns - 999_999) / 1_000_000
            }
        }
        var byEnter: [Key: ZoneVisit] = [:]
        for v in told { byEnter[Key(v.asset, v.zone, v.entered)] = v }
        var restart = Restart()
        var open = Set<Key>()
        for visit in counted {
            let key = Key(visit.asset, visit.zone, visit.entered)
            if visit.visit { open.insert(key) }
            if visit.visit, let match = byEnter[key] {
                restart.closed.append(
                    ZoneVisit(asset: match.asset, zone: match.zone, entered: visit.entered, left: match.left))
            } else {
                restart.resumed.append(visit)
            }
        }
        let stored = Set(enters.filter { $0.visit && $0.entered }.map { Key($0.asset, $0.zone, $0.time) })
        restart.uncounted = told.filter { v in
            let key = Key(v.asset, v.zone, v.entered)
            return v.entered >= countedFrom && !open.contains(key) && !stored.contains(key)
        }
        return restart
    }

    /// How far each zone's counting has reached: the latest time among its transitions.
    public static func floors(_ transitions: [ZoneTransition]) -> [String: Timestamp] {
        var floors: [String: Timestamp] = [:]
        for t in transitions { floors[t.zone] = max(floors[t.zone] ?? t.time, t.time) }
        return floors
    }

    /// `transitions` as a start stores them: none before its zone's `floor` (the counting would
    /// take it there anyway; said here, so that what is stored is what is counted), in the
    /// order of their times, an exit before an enter at the same time.
    public static func ordered(_ transitions: [ZoneTransition], floors: [String: Timestamp]) -> [ZoneTransition] {
        transitions.map { t in
            var t = t
            if let floor = floors[t.zone], t.time < floor { t.time = floor }
            return t
        }
        .enumerated()
        .sorted {
            ($0.element.time, $0.element.entered ? 1 : 0, $0.offset) < (
                $1.element.time, $1.element.entered ? 1 : 0, $1.offset
            )
        }
        .map(\.element)
    }
}
