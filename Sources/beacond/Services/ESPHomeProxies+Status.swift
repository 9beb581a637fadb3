import APIModel
import BeaconConfig
import BeaconCore
import ESPHome
import Synchronization

/// What `/v1/status` and `/metrics` show of the proxies, as the ESPHome thread last left them.
extension ESPHomeProxies {
    func publishStates(_ links: [ProxyLink]) {
        let now = clock()
        states.withLock { states in
            for (i, link) in links.enumerated() {
                states[i].connectedSince = link.connectedSince
                states[i].identity = link.session?.identity ?? states[i].identity
                states[i].refused = link.refused
                states[i].shed = link.rate.shed
                states[i].lastError = link.lastError
                states[i].encrypted = link.psk != nil
                // The rate over the last ten seconds or so.
                let elapsed = now - states[i].rateSince
                if elapsed >= .seconds(10) {
                    let seconds = Double(elapsed.nanoseconds) / 1e9
                    states[i].perSecond = Double(link.advertisements - states[i].advertisements) / seconds
                    (states[i].advertisements, states[i].rateSince) = (link.advertisements, now)
                }
                states[i].total = link.advertisements
            }
        }
    }

    /// Each proxy as `/v1/status` shows it.
    var status: [StatusReport.ESPHomeProxy] {
        states.withLock { states in
            states.map { s in
                var p = StatusReport.ESPHomeProxy()
                p.receiver = s.spec.receiver
                p.host = "\(s.spec.host):\(s.spec.port)"
                p.encrypted = s.encrypted || s.spec.encryptionKey != nil || s.spec.encryptionKeyFile != nil
                p.connected = s.connectedSince != nil
                p.since = s.connectedSince.map(RFC3339.format)
                p.name = s.identity.map(\.name).flatMap { $0.isEmpty ? nil : $0 }
                p.model = s.identity.map(\.model).flatMap { $0.isEmpty ? nil : $0 }
                p.esphomeVersion = s.identity.map(\.esphomeVersion).flatMap { $0.isEmpty ? nil : $0 }
                p.advertisements = s.total
                p.advertisementsPerSecond = s.perSecond
                p.refused = s.refused
                p.shed = s.shed
                p.lastError = s.lastError
                return p
            }
        }
    }
}

/// What status and metrics show of a proxy.
struct ESPHomeProxyState: Sendable {
    let spec: ESPHomeProxySpec
    var connectedSince: Timestamp?
    var identity: ProxyIdentity?
    var encrypted = false
    /// Advertisements taken since the start, and at the last rate sample.
    var total = 0
    var advertisements = 0
    var rateSince = Timestamp(nanoseconds: 0)
    var perSecond = 0.0
    var refused = 0
    var shed = 0
    var lastError: String?

    init(spec: ESPHomeProxySpec) { self.spec = spec }
}
