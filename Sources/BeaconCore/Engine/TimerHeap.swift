/// A binary min-heap of region deadlines.
///
/// Entries are lazy: a region's real deadline may have moved later since its entry was
/// pushed (every sighting while inside moves the exit). The engine re-checks on pop and
/// re-arms, so sightings never touch the heap: O(1) per sighting, O(log n) per timeout.
struct TimerHeap: Sendable {
    struct Entry: Sendable {
        var due: Timestamp
        var slot: Int32
        var generation: UInt32

        /// Earlier first; at the same instant, the region registered first goes first, so
        /// events that fall on one instant come out in a reproducible order.
        func precedes(_ other: Entry) -> Bool { (due, slot) < (other.due, other.slot) }
    }

    private var entries: [Entry] = []

    var count: Int { entries.count }
    var earliest: Timestamp? { entries.first?.due }

    /// Moves every deadline by `d`: the order stays as it was.
    mutating func shift(by d: TimeSpan) {
        for i in entries.indices { entries[i].due = entries[i].due + d }
    }

    mutating func push(_ e: Entry) {
        entries.append(e)
        var i = entries.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard entries[i].precedes(entries[parent]) else { break }
            entries.swapAt(i, parent)
            i = parent
        }
    }

    /// Removes and returns the earliest entry if it is due at or before `now`.
    mutating func popDue(_ now: Timestamp) -> Entry? {
        guard let first = entries.first, first.due <= now else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1
                let r = l + 1
                var m = i
                if l < entries.count, entries[l].precedes(entries[m]) { m = l }
                if r < entries.count, entries[r].precedes(entries[m]) { m = r }
                if m == i { break }
                entries.swapAt(i, m)
                i = m
            }
        }
        return first
    }
}
