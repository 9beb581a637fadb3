import BeaconCore

#if canImport(Glibc)
    import Glibc
#endif

/// `--ad-structures [N]`: raw advertisements read into `AdvertisementData`, as an ESPHome proxy
/// forwards them — an iBeacon's three structures, and the most small service-data structures
/// `ADStructures.maxLength` holds (412 of 4 bytes): what a proxy's worst advertisement costs.
func adStructuresMode(count: Int) {
    let iBeacon: [UInt8] =
        [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + [UInt8](repeating: 0xE2, count: 16) + [
            0, 42, 0, 7, 0xC5,
        ]
    let many = [UInt8]((0..<412).flatMap { i in [0x03, 0x16, UInt8(i & 0xFF), UInt8(i >> 8)] })
    for (name, bytes) in [("iBeacon (3 structures)", iBeacon), ("412 service-data structures", many)] {
        var kept = 0
        let start = monotonicSeconds()
        for _ in 0..<count {
            guard let parsed = try? ADStructures(parsing: bytes) else { continue }
            kept &+= parsed.data.isEmpty ? 0 : 1
        }
        let took = monotonicSeconds() - start
        let perAd = took / Double(count) * 1e6
        let shown = (perAd * 100).rounded() / 100
        print("\(name): \(count) parsed in \((took * 1000).rounded() / 1000) s, \(shown) µs each (\(kept) kept)")
    }
}

func monotonicSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}
