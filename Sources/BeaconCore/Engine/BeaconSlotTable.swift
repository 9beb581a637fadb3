/// A beacon identity as three words: what the engine's table is keyed by.
///
/// Why: the table is read at every sighting. Through `Dictionary` an identity went through
/// `Hasher` (SipHash, seeded per lookup) and an enum's equality: a tenth of the engine's time.
/// Three words compare in three instructions and mix in a few multiplications.
struct BeaconKey: Equatable {
    var a: UInt64
    var b: UInt64
    var c: UInt64

    init(_ identity: BeaconIdentity) {
        switch identity {
        case let .ibeacon(id):
            (a, b, c) = (id.uuid.high, id.uuid.low, UInt64(id.major) << 16 | UInt64(id.minor))
        case let .eddystone(id):
            // Bit 32 of `c` tells the kinds apart (an iBeacon's `c` has 32 bits).
            (a, b, c) = (id.namespaceHigh, UInt64(id.namespaceLow) << 48 | id.instanceValue, 1 << 32)
        }
    }
}

/// Beacon identity → the engine's slot: open addressing with linear probing, at most three
/// quarters full, removal by shifting back the entries that follow (no tombstones to sweep).
///
/// An entry is the slot and 32 bits of the key's hash, 8 bytes: the key itself is the
/// record's (`records[slot].identity`), read only when the hash bits agree, which on a hit is
/// the record the engine reads next anyway. (With the keys in the table it held 28 bytes an
/// entry, and replay's peak memory grew by 0.6 MB over `Dictionary`'s.)
///
/// The mix is seeded once per table from the system's generator, so identities chosen to
/// collide (any device can advertise any identity) cannot be chosen without knowing the seed;
/// the table's order is never read, so the seed changes no result.
struct BeaconSlotTable {
    /// The slot of each entry, -1 where the entry is empty.
    private var slots: [Int32]
    /// The high 32 bits of each entry's hash.
    private var tags: [UInt32]
    private var mask: Int
    private(set) var count = 0
    private let seed = UInt64.random(in: .min ... .max)

    init(capacity: Int = 64) {
        var size = 16
        while size * 3 < capacity * 4 { size *= 2 }
        slots = Array(repeating: -1, count: size)
        tags = Array(repeating: 0, count: size)
        mask = size - 1
    }

    @inline(__always)
    private func hash(_ key: BeaconKey) -> UInt64 {
        var h = (key.a ^ seed) &* 0x9E37_79B9_7F4A_7C15
        h = (h ^ (h >> 29) ^ key.b) &* 0xBF58_476D_1CE4_E5B9
        h = (h ^ (h >> 32) ^ key.c) &* 0x94D0_49BB_1331_11EB
        return h ^ (h >> 31)
    }

    @inline(__always)
    private static func key(_ slot: Int32, _ records: [BeaconRecord?]) -> BeaconKey {
        BeaconKey(records[Int(slot)]!.identity)
    }

    /// The slot of `key`, whose record is in `records`.
    @inline(__always)
    func find(_ key: BeaconKey, in records: [BeaconRecord?]) -> Int32? {
        let h = hash(key)
        let tag = UInt32(truncatingIfNeeded: h >> 32)
        var i = Int(truncatingIfNeeded: h) & mask
        while slots[i] >= 0 {
            if tags[i] == tag, Self.key(slots[i], records) == key { return slots[i] }
            i = (i + 1) & mask
        }
        return nil
    }

    /// Adds `key` (not in the table) with `slot`; `records` holds the other entries' records.
    mutating func insert(_ key: BeaconKey, slot: Int32, in records: [BeaconRecord?]) {
        if (count + 1) * 4 > slots.count * 3 { grow(records) }
        let h = hash(key)
        var i = Int(truncatingIfNeeded: h) & mask
        while slots[i] >= 0 { i = (i + 1) & mask }
        slots[i] = slot
        tags[i] = UInt32(truncatingIfNeeded: h >> 32)
        count += 1
    }

    /// Removes `key`, whose record is still in `records`.
    mutating func remove(_ key: BeaconKey, in records: [BeaconRecord?]) {
        let h = hash(key)
        let tag = UInt32(truncatingIfNeeded: h >> 32)
        var i = Int(truncatingIfNeeded: h) & mask
        while slots[i] >= 0, !(tags[i] == tag && Self.key(slots[i], records) == key) { i = (i + 1) & mask }
        guard slots[i] >= 0 else { return }
        slots[i] = -1
        count -= 1
        // Entries after the hole that would no longer be found move back into it.
        var j = (i + 1) & mask
        while slots[j] >= 0 {
            let home = Int(truncatingIfNeeded: hash(Self.key(slots[j], records))) & mask
            // Whether `home` lies cyclically in (i, j]: then the entry stays where it is.
            let stays = i <= j ? (i < home && home <= j) : (i < home || home <= j)
            if !stays {
                (slots[i], tags[i]) = (slots[j], tags[j])
                slots[j] = -1
                i = j
            }
            j = (j + 1) & mask
        }
    }

    private mutating func grow(_ records: [BeaconRecord?]) {
        let old = slots
        slots = Array(repeating: -1, count: old.count * 2)
        tags = Array(repeating: 0, count: old.count * 2)
        mask = slots.count - 1
        for slot in old where slot >= 0 {
            let h = hash(Self.key(slot, records))
            var i = Int(truncatingIfNeeded: h) & mask
            while slots[i] >= 0 { i = (i + 1) & mask }
            slots[i] = slot
            tags[i] = UInt32(truncatingIfNeeded: h >> 32)
        }
    }
}
