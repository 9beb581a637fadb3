/// A fingerprint of a configuration file's text (FNV-1a, 64 bits), so that `beaconctl doctor`
/// can tell an operator that the file was edited after the daemon loaded it — the commonest
/// reason a change "does nothing" is a forgotten `systemctl reload`. Not a security measure:
/// it only has to change when the text does.
public enum ConfigDigest {
    public static func of(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
