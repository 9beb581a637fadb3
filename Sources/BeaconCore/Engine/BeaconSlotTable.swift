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
/// The mix is seeded once per table from the system's generator, so identities chosen to
/// collide (any device can advertise any identity) cannot be chosen without knowing the seed;
/// the table's order is never read, so the seed changes no result.
struct BeaconSlotTable {
    private var keys: [BeaconKey]
    /// The slot of each entry, -1 where the entry is empty.
    private var slots: [Int32]
    private var mask: Int
    private(set) var count = 0
    private let seed = UInt64.random(in: .min ... .max)

    init(capacity: Int = 64) {
        var size = 16
        while size * 3 < capacity * 4 { size *= 2 }
        keys = Array(repeating: BeaconKey.empty, count: size)
        slots = Array(repeating: -1, count: size)
        mask = size - 1
    }

    @inline(__always)
    private func home(_ key: BeaconKey) -> Int {
        var h = (key.a ^ seed) &* 0x9E37_79B9_7F4A_7C15
        h = (h ^ (h >> 29) ^ key.b) &* 0xBF58_476D_1CE4_E5B9
        h = (h ^ (h >> 32) ^ key.c) &* 0x94D0_49BB_1331_11EB
        return Int(truncatingIfNeeded: h ^ (h >> 31)) & mask
    }

    @inline(__always)
    func find(_ key: BeaconKey) -> Int32? {
        var i = home(key)
        while slots[i] >= 0 {
            if keys[i] == key { return slots[i] }
            i = (i + 1) & mask
        }
        return nil
    }

    /// Adds `key` (not in the table) with `slot`.
    mutating func insert(_ key: BeaconKey, slot: Int32) {
        if (count + 1) * 4 > slots.count * 3 { grow() }
        var i = home(key)
        while slots[i] >= 0 { i = (i + 1) & mask }
        keys[i] = key
        slots[i] = slot
        count += 1
    }

    mutating func remove(_ key: BeaconKey) {
        var i = home(key)
        while slots[i] >= 0, keys[i] != key { i = (i + 1) & mask }
        guard slots[i] >= 0 else { return }
        slots[i] = -1
        count -= 1
        // Entries after the hole that would no longer be found move back into it.
        var j = (i + 1) & mask
        while slots[j] >= 0 {
            let h = home(keys[j])
            // Whether `h` lies cyclically in (i, j]: then the entry stays where it is.
            let stays = i <= j ? (i < h && h <= j) : (i < h || h <= j)
            if !stays {
                keys[i] = keys[j]
                slots[i] = slots[j]
                slots[j] = -1
                i = j
            }
            j = (j + 1) & mask
        }
    }

    private mutating func grow() {
        let old = zip(keys, slots).filter { $0.1 >= 0 }
        let size = slots.count * 2
        keys = Array(repeating: BeaconKey.empty, count: size)
        slots = Array(repeating: -1, count: size)
        mask = size - 1
        count = 0
        for (key, slot) in old { insert(key, slot: slot) }
    }
}

extension BeaconKey {
    static let empty = BeaconKey(a: 0, b: 0, c: 0)

    init(a: UInt64, b: UInt64, c: UInt64) {
        (self.a, self.b, self.c) = (a, b, c)
    }
}
