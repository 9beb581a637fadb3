/// What bluetoothd keeps of a device paired with an adapter
/// (`/var/lib/bluetooth/<adapter>/<device>/info`, a GLib key file): its name and, when it gave
/// one at pairing, its identity resolving key — what `beaconctl enroll` turns into an asset.
///
/// bluetoothd writes the key as the kernel hands it over (`[IdentityResolvingKey] Key=`, least
/// significant byte first, as on the air); the Core specification, ESPresense, Home Assistant and
/// beacond's `beacon: {irk}` write it most significant first. `key` is in beacond's order.
public struct PairedDevice: Sendable, Equatable {
    public var name: String?
    public var key: IdentityResolvingKey?
    /// `[General] AddressType`: `public` or `static` (random static) for LE devices.
    public var addressType: String?

    /// Reads an `info` file's text; groups and keys it does not need are skipped.
    public init(info text: String) {
        var group = ""
        // Lines end at "\n" alone, as GLib's key files do: a name may hold other line
        // separators (U+0085, U+2028) that are the name's.
        for raw in text.split(separator: "\n").map({ $0.hasSuffix("\r") ? $0.dropLast() : $0 }) {
            let line = raw.trimmingSpaces
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                group = String(line.dropFirst().dropLast())
                continue
            }
            guard let eq = line.firstIndex(of: "=") else { continue }
            let key = String(line[..<eq]).trimmingSpaces
            let value = String(line[line.index(after: eq)...]).trimmingSpaces
            switch (group, key) {
            case ("General", "Name"): name = Self.unescaped(value)
            case ("General", "AddressType"): addressType = value
            case ("IdentityResolvingKey", "Key"):
                let hex = value.hasPrefix("0x") ? String(value.dropFirst(2)) : value
                if let stored = IdentityResolvingKey(hex: hex) {
                    self.key = IdentityResolvingKey(bytes: stored.bytes.reversed())
                }
            default: break
            }
        }
    }

    /// A key file's string value as GLib writes it (`g_key_file_set_string`): `\s`, `\n`,
    /// `\t`, `\r` and `\\` escapes; any other backslash is kept.
    static func unescaped(_ value: String) -> String {
        guard value.contains("\\") else { return value }
        var out = ""
        var escaping = false
        for c in value {
            if escaping {
                switch c {
                case "s": out.append(" ")
                case "n": out.append("\n")
                case "t": out.append("\t")
                case "r": out.append("\r")
                case "\\": out.append("\\")
                default: out += "\\" + String(c)
                }
                escaping = false
            } else if c == "\\" {
                escaping = true
            } else {
                out.append(c)
            }
        }
        if escaping { out.append("\\") }
        return out
    }
}

extension StringProtocol {
    fileprivate var trimmingSpaces: String {
        var s = Substring(self)
        while let c = s.first, c == " " || c == "\t" || c == "\r" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" || c == "\r" { s.removeLast() }
        return String(s)
    }
}
