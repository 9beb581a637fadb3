import BeaconCore

#if canImport(Glibc)
    import Glibc
#endif

/// A Device1 object's path, `/org/bluez/<adapter>/dev_AA_BB_CC_DD_EE_FF`, as its adapter's
/// name and the address's 48 bits: the key of the scanner's device table.
///
/// Why: every advertisement arrives as a signal on this path. Kept as a `String`, its 37
/// bytes were a heap allocation per signal and a hash of them per lookup; read from the
/// signal's bytes into this, an adapter name of up to 15 bytes stays inside the value.
struct DevicePath: Hashable {
    var adapter: String
    var address: UInt64

    /// The path's bytes; nil for any other object path.
    init?(bytes: UnsafeRawBufferPointer) {
        let prefix: StaticString = "/org/bluez/"
        let prefixCount = prefix.utf8CodeUnitCount
        // "/org/bluez/" + adapter + "/dev_" + 17 bytes of address.
        guard bytes.count > prefixCount + 5 + 17,
            memcmp(bytes.baseAddress!, prefix.utf8Start, prefixCount) == 0
        else { return nil }
        let addressStart = bytes.count - 17
        let devStart = addressStart - 5
        guard devStart > prefixCount, bytes[devStart] == UInt8(ascii: "/"), bytes[devStart + 1] == UInt8(ascii: "d"),
            bytes[devStart + 2] == UInt8(ascii: "e"), bytes[devStart + 3] == UInt8(ascii: "v"),
            bytes[devStart + 4] == UInt8(ascii: "_")
        else { return nil }
        let adapterBytes = UnsafeRawBufferPointer(rebasing: bytes[prefixCount..<devStart])
        guard !adapterBytes.contains(UInt8(ascii: "/")) else { return nil }
        // `AA_BB_…` read as `AA:BB:…`: the separators are checked for underscores.
        var text: (UInt64, UInt64, UInt8) = (0, 0, 0)
        let value: UInt64? = withUnsafeMutableBytes(of: &text) { out in
            for i in 0..<17 {
                let b = bytes[addressStart + i]
                if i % 3 == 2 {
                    guard b == UInt8(ascii: "_") else { return nil }
                    out[i] = UInt8(ascii: ":")
                } else {
                    out[i] = b
                }
            }
            return Sighting.addressValue(UnsafeRawBufferPointer(rebasing: out[0..<17]))
        }
        guard let value else { return nil }
        adapter = String(decoding: adapterBytes, as: UTF8.self)
        address = value
    }

    init?(_ path: String) {
        var path = path
        guard let parsed = path.withUTF8({ DevicePath(bytes: UnsafeRawBufferPointer($0)) }) else { return nil }
        self = parsed
    }

    /// `AA:BB:CC:DD:EE:FF`.
    var addressText: String { BluetoothAddress(value: address).text }

    /// The object path, as BlueZ writes it.
    var text: String {
        "/org/bluez/\(adapter)/dev_"
            + String(unsafeUninitializedCapacity: 17) { out in
                BluetoothAddress(value: address).write(
                    into: UnsafeMutableRawBufferPointer(out), separator: UInt8(ascii: "_"))
                return 17
            }
    }
}
