import BeaconCore

/// Phones and watches (`assets[].beacon: {irk}`): each sends from a resolvable private address
/// of its key that it changes every `phoneAddressLifetime`, as iOS and Android do, so that
/// `./scripts/run-site` and the tests show one asset across its addresses (SPEC §9).
extension SiteSimulator {
    /// iOS and Android change their address about every 15 minutes.
    public static let phoneAddressLifetime = TimeSpan.minutes(15)

    /// Phone `a`'s address at `t`: drawn from the phone and the period alone, so the other
    /// tags' sightings do not change when a phone is added. Each phone changes at its own
    /// moment (its periods are offset by its index), not all at once.
    func phoneAddress(_ a: Int, key: IdentityResolvingKey, at t: Timestamp) -> String {
        let lifetime = Self.phoneAddressLifetime.nanoseconds
        let offset = Int64(a) * 97 * 1_000_000_000 % lifetime
        let period = UInt64(bitPattern: (t.nanoseconds + offset) / lifetime)
        var z = period &+ UInt64(a) &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return key.address(prand: UInt32(truncatingIfNeeded: z ^ (z >> 31))) ?? Self.address(a)
    }
}
