import BeaconCore

/// Phones and watches (`assets[].beacon: {irk}`): each sends from a resolvable private address
/// of its key that it changes every `phoneAddressLifetime`, as iOS and Android do, so that
/// `./scripts/run-site` and the tests show one asset across its addresses (SPEC §9).
extension SiteSimulator {
    /// iOS and Android change their address about every 15 minutes.
    public static let phoneAddressLifetime = TimeSpan.minutes(15)

    /// Phone `a`'s address at `t`: drawn from the phone and the period alone, so the other
    /// tags' sightings do not change when a phone is added. Each phone changes at its own
    /// moment (its periods are offset by its index), not all at once. Made once a period.
    mutating func phoneAddress(_ a: Int, key: IdentityResolvingKey, at t: Timestamp) -> String {
        let lifetime = Self.phoneAddressLifetime.nanoseconds
        let period = (t.nanoseconds + Int64(a) * 97 * 1_000_000_000 % lifetime) / lifetime
        if let kept = phoneAddresses[a], kept.period == period { return kept.address }
        var draw = SeededRandom(seed: UInt64(bitPattern: period) &+ UInt64(a) &* 0x9E37_79B9_7F4A_7C15)
        let address = key.address(prand: UInt32(truncatingIfNeeded: draw.next())) ?? Self.address(a)
        phoneAddresses[a] = (period, address)
        return address
    }
}
