import APIModel
import BeaconConfig
import BeaconCore
import BlueZ

extension Doctor {
    /// An ESPHome proxy (SPEC §9): connected and forwarding, or why not and what to do.
    func esphomeCheck(_ p: StatusReport.ESPHomeProxy) -> Check {
        let name = "esphome \(p.receiver)"
        guard p.connected else {
            let why = p.lastError ?? "connecting"
            return Check(name: name, verdict: .fail, detail: "\(p.host): \(why)", fix: Self.esphomeFix(why))
        }
        let what = [p.name, p.model, p.esphomeVersion.map { "ESPHome \($0)" }].compactMap { $0 }.joined(separator: ", ")
        guard p.advertisements > 0 else {
            return Check(
                name: name, verdict: .warn, detail: "\(p.host) (\(what)): connected, no advertisement forwarded yet",
                fix: "check the proxy's YAML has bluetooth_proxy: and esp32_ble_tracker: with active scanning")
        }
        let refused = p.refused > 0 ? ", \(p.refused) refused (malformed)" : ""
        let rate = (p.advertisementsPerSecond * 10).rounded() / 10
        let detail = "\(p.host) (\(what)): \(p.advertisements) advertisements, \(rate)/s\(refused)"
        return Check(name: name, verdict: .ok, detail: detail)
    }

    /// What to do about a proxy's last error.
    static func esphomeFix(_ why: String) -> String {
        if why.contains("encryption key") || why.contains("encryption_key") || why.contains("API encryption") {
            return
                "copy the key from the proxy's YAML (api: encryption: key:) into encryption_key_file, or remove it for a proxy without encryption"
        }
        if why.contains("password") { return "set esphome[].password to the proxy's api: password:" }
        if why.contains("does not resolve") { return "use the proxy's IP address, or check its name in DNS/mDNS" }
        if why.contains("refused") { return "check the proxy is on and its api: port (6053 by default)" }
        if why.contains("no answer") || why.contains("timed out") || why.contains("unreachable") {
            return "check the proxy is powered and on this network (ping it)"
        }
        return "see the proxy's logs (esphome logs <its yaml>)"
    }

    /// The ESPHome devices announced on the network (mDNS, through Avahi on the system bus)
    /// that `esphome:` does not name yet, each with the entry to paste; skipped without Avahi.
    func esphomeDiscoveryCheck(configured: [ESPHomeProxySpec]) -> Check {
        let name = "esphome discovery"
        let found: [AvahiBrowser.Service]
        do {
            found = try AvahiBrowser.browse(type: "_esphomelib._tcp", waitMs: 2000)
        } catch {
            return Check(
                name: name, verdict: .skip, detail: "Avahi is not on the system bus (avahi-daemon): no devices listed")
        }
        let known = Set(configured.map(\.host))
        let new = found.filter { !known.contains($0.address) && !known.contains($0.host) && !known.contains($0.name) }
        guard !new.isEmpty else {
            return Check(name: name, verdict: .ok, detail: "\(found.count) ESPHome devices announced, none new")
        }
        // mDNS needs no credential: a name is used only if it is an ESPHome node name, and
        // every value goes into the entry quoted, so no record can add or alter an entry.
        let usable = new.filter { Self.isNodeName($0.name) }
        var entries = usable.map { s -> String in
            let key = s.txt["api_encryption"] != nil ? ", encryption_key_file: /etc/beacond/\(s.name).key" : ""
            let what = [s.txt["friendly_name"], s.txt["version"].map { "ESPHome \($0)" }].compactMap { $0 }
            return "- {receiver: \(s.name), host: \(Self.yamlQuoted(s.address)), port: \(s.port)\(key)}"
                + (what.isEmpty ? "" : "   # " + OutsideText.line(what.joined(separator: ", "), limit: 80))
        }
        entries += new.filter { !Self.isNodeName($0.name) }.map {
            "(not listed: \(Self.yamlQuoted(String($0.name.prefix(64)))) at \(Self.yamlQuoted($0.address)) is not an "
                + "ESPHome node name, a-z 0-9 and -)"
        }
        return Check(
            name: name, verdict: .ok,
            detail: "\(new.count) ESPHome devices announced that esphome: does not name (each needs a receiver of the "
                + "same id in receivers:, with its position; a proxy needs bluetooth_proxy: in its YAML):",
            entries: entries)
    }

    /// ESPHome's rule for a node's name (it is the device's host name): lower-case letters,
    /// digits and hyphens, a DNS label's 63 at most.
    static func isNodeName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 63 && !name.hasPrefix("-")
            && name.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
    }

    /// A YAML double-quoted scalar: quotes and backslashes escaped, control characters
    /// written out with YAML's own escapes (`\n`, `\u001b`).
    static func yamlQuoted(_ text: String) -> String {
        // By scalar: a quote with a combining mark after it is one Character, and still a quote.
        var escaped = ""
        for scalar in text.unicodeScalars {
            if scalar == "\\" || scalar == "\"" { escaped.unicodeScalars.append("\\") }
            escaped.unicodeScalars.append(scalar)
        }
        return "\"" + OutsideText.line(escaped, limit: .max) + "\""
    }
}
