import ArgumentParser
import BeaconCore
import BeaconRuntime

#if canImport(Glibc)
    import Glibc
#endif

/// `beaconctl enroll ADDRESS`: a phone or a watch paired with this gateway becomes a badge
/// (SPEC §9). Reads its identity resolving key from bluetoothd's store and prints the asset
/// entry to paste into beacond.yaml; says how to pair when it is not paired.
struct Enroll: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the asset entry of a phone or watch paired with this gateway (its identity resolving key).",
        discussion: """
            Pair the device first (bluetoothctl: scan on, pair ADDRESS, trust ADDRESS) as root; \
            bluetoothd keeps the key in /var/lib/bluetooth/<adapter>/<device>/info, readable by root only.
            """)

    @Argument(help: "The device's address as bluetoothctl lists it (AA:BB:CC:DD:EE:FF).") var address: String
    @Option(help: "The asset id to print (default: from the device's name).") var id: String?
    @Option(help: ArgumentHelp("bluetoothd's store.", visibility: .hidden)) var store = "/var/lib/bluetooth"

    func run() throws {
        guard let parsed = BluetoothAddress(address) else {
            throw ValidationError("expected an address like AA:BB:CC:DD:EE:FF, got \"\(address)\"")
        }
        let device = parsed.text
        guard let adapters = Self.entries(store) else {
            printError(
                "beaconctl: cannot read \(store): \(String(cString: strerror(errno)))"
                    + (getuid() != 0 ? " (bluetoothd's store is root's: run sudo beaconctl enroll \(device))" : ""))
            throw ExitCode(77)
        }
        for adapter in adapters.sorted() where BluetoothAddress(adapter) != nil {
            let info = "\(store)/\(adapter)/\(device)/info"
            guard access(info, F_OK) == 0 else { continue }
            let text: String
            do { text = try readTextFile(info) } catch {
                printError("beaconctl: cannot read \(info): \(error)")
                throw ExitCode(77)
            }
            let paired = PairedDevice(info: text)
            guard let key = paired.key else {
                printError(
                    """
                    beaconctl: \(device) is paired with adapter \(adapter), but it gave no identity resolving key.
                    A phone gives one when it pairs over Bluetooth Low Energy: remove it (bluetoothctl remove \(device)) \
                    and pair again from the phone's Bluetooth settings while beacond's gateway is discoverable.
                    """)
                throw ExitCode(1)
            }
            let name = paired.name ?? device
            writeOut(
                """
                # \(Self.quoted(name)), paired with adapter \(adapter). Paste under assets: in beacond.yaml; the key lets anyone \
                who has it follow the device, so keep the file root's (0600).
                  - {id: \(id ?? Self.identifier(name)), name: \(Self.quoted(name)), beacon: {irk: \(key.hex)}}
                """)
            return
        }
        printError(
            """
            beaconctl: \(device) is not paired with this gateway (no \(store)/*/\(device)/info).
            Pair it as root, with the phone's Bluetooth settings open:
              bluetoothctl
              [bluetooth]# scan on
              [bluetooth]# pair \(device)
              [bluetooth]# trust \(device)
            then run beaconctl enroll \(device) again. (A phone shows its own address, not the private one it \
            advertises: pick it in bluetoothctl's list by its name.)
            """)
        throw ExitCode(1)
    }

    /// The names in directory `path`, or nil when it cannot be read.
    static func entries(_ path: String) -> [String]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// An asset id from a device's name: "Anna's iPhone" → "annas-iphone".
    static func identifier(_ name: String) -> String {
        var out = ""
        for c in name.lowercased().unicodeScalars {
            if ("a"..."z").contains(c) || ("0"..."9").contains(c) {
                out.unicodeScalars.append(c)
            } else if c != "'", !out.isEmpty, !out.hasSuffix("-") {
                out += "-"
            }
        }
        while out.hasSuffix("-") { out.removeLast() }
        return out.isEmpty ? "phone" : String(out.prefix(64))
    }

    /// A YAML double-quoted scalar of `s` that beacond reads back as `s`: quotes and
    /// backslashes escaped, and every character YAML does not allow printed in a quoted
    /// scalar (control characters, C1 controls, a byte-order mark, a device's name may hold
    /// any of them) as a `\u` escape. A newline printed raw would also end the comment line.
    static func quoted(_ s: String) -> String {
        var out = "\""
        for c in s.unicodeScalars {
            switch c.value {
            case 0x22, 0x5C:
                out += "\\"
                out.unicodeScalars.append(c)
            case 0..<0x20, 0x7F...0x9F, 0xFEFF, 0xFFFE, 0xFFFF:
                let hex = String(c.value, radix: 16, uppercase: true)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }
}
