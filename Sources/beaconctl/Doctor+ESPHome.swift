import APIModel

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
}
