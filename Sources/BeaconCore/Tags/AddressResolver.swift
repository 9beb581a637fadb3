import Crypto

/// Which configured asset, if any, a resolvable private address belongs to: each new address
/// tried against every asset's identity resolving key once, the answer remembered.
///
/// Why a cache: a phone keeps an address for minutes and advertises several times a second,
/// so a store with a thousand badges pays a thousand AES blocks (about 12 µs) per address, not
/// per packet. A store's air is full of other phones' addresses too, none of them ours: their
/// "no" is remembered the same way. The table is bounded (a flood of made-up addresses starts
/// it afresh; the badges' addresses are learned again at their next packet).
public struct AddressResolver: Sendable {
    private let keys: ResolvingKeys
    /// The asset of each key.
    private let assets: [Int]
    /// Address → asset index, or -1 for none.
    private var known: [UInt64: Int32] = [:]
    static let cacheLimit = 65_536

    /// Addresses tried against the keys (each costs one AES per key), and of them resolved.
    public private(set) var tried = 0
    public private(set) var resolved = 0

    /// `keys`: each asset index with its key.
    public init(keys: [(asset: Int, key: IdentityResolvingKey)]) {
        self.keys = ResolvingKeys(keys: keys.map(\.key.bytes))
        assets = keys.map(\.asset)
    }

    public var isEmpty: Bool { keys.count == 0 }

    /// Resolves the new private addresses of `batch` together, before the engine takes its
    /// sightings one by one (`BeaconEngine.prepare`): a thousand keys' schedules are read
    /// from memory once per batch instead of once per address, which made the per-address
    /// path 20 times slower than the cipher itself once the engine's own work had pushed them
    /// out of the cache.
    public mutating func prepare(_ batch: [Sighting]) {
        guard keys.count > 0 else { return }
        var fresh: [UInt64] = []
        var seen: Set<UInt64> = []
        for s in batch {
            guard let parsed = candidate(s), known[parsed.value] == nil,
                seen.insert(parsed.value).inserted
            else { continue }
            fresh.append(parsed.value)
        }
        guard !fresh.isEmpty else { return }
        if known.count + fresh.count > Self.cacheLimit { known.removeAll(keepingCapacity: true) }
        let answers = keys.keys(
            resolving: fresh.map { (prand: UInt32($0 >> 24), hash: UInt32($0 & 0xFF_FFFF)) })
        tried += fresh.count
        for (value, k) in zip(fresh, answers) {
            if let k {
                known[value] = Int32(assets[k])
                resolved += 1
            } else {
                known[value] = -1
            }
        }
    }

    /// The sighting's address when it may be a resolvable private one.
    private func candidate(_ s: Sighting) -> BluetoothAddress? {
        guard s.addressKind != .public else { return nil }
        if let address = s.bluetoothAddress { return address.isResolvable ? address : nil }
        return candidate(s.address, type: s.addressType)
    }

    /// `address` parsed when it may be a resolvable private one.
    private func candidate(_ address: String, type: String?) -> BluetoothAddress? {
        // The first digit of a resolvable private address is 4 to 7 (its top bits 01): most
        // addresses stop at this one comparison, before any parsing.
        guard type != "public", let first = address.utf8.first, first >= UInt8(ascii: "4"),
            first <= UInt8(ascii: "7"), let parsed = BluetoothAddress(address), parsed.isResolvable
        else { return nil }
        return parsed
    }

    /// The asset whose key resolves `address`; nil when none does, when the address is not a
    /// resolvable private one, or when it is given as public (`type`: BlueZ's `public` or
    /// `random`; nil when the source does not say, as ESPresense's messages do not).
    public mutating func asset(address: String, type: String?) -> Int? {
        guard keys.count > 0, let parsed = candidate(address, type: type) else { return nil }
        return asset(resolvable: parsed)
    }

    /// The same for an address already read (`public`: given as public, so never resolved).
    public mutating func asset(address: BluetoothAddress, public: Bool) -> Int? {
        guard keys.count > 0, !`public`, address.isResolvable else { return nil }
        return asset(resolvable: address)
    }

    private mutating func asset(resolvable parsed: BluetoothAddress) -> Int? {
        if let a = known[parsed.value] { return a < 0 ? nil : Int(a) }
        if known.count >= Self.cacheLimit { known.removeAll(keepingCapacity: true) }
        tried += 1
        guard let k = keys.key(resolving: parsed.prand, hash: parsed.hash) else {
            known[parsed.value] = -1
            return nil
        }
        known[parsed.value] = Int32(assets[k])
        resolved += 1
        return assets[k]
    }
}
