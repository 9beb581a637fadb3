import BeaconCore
import Publishing
import Synchronization

/// Which gateway of a site delivers its webhooks (SPEC §6.3), shared by the webhook workers
/// and the site link. The locator delivers and says how far (`delivered/<webhook>`, the
/// enqueue time of its last acknowledged event); the others stand by, dropping what the
/// locator has delivered and keeping the rest. When the locator dies, the next one delivers
/// what it kept: the hand-over's events are sent at least once, some twice (an `overlap` of
/// them), none lost.
final class SiteDeliveryGate: Sendable {
    private struct State {
        var locator = false
        /// How far the locator delivered each webhook, as it last said.
        var delivered: [String: Timestamp] = [:]
        /// This gateway's own deliveries (as the locator), not yet published.
        var toPublish: [String: Timestamp] = [:]
    }

    private let state = Mutex(State())
    /// At most this many webhooks' progress is kept: ids come from the network.
    static let maxWebhooks = 1024
    /// A standby keeps this much before the locator's last delivery: the gateways' engines
    /// make the same event at slightly different times (a batch waits up to 250 ms, clocks
    /// differ by NTP's milliseconds), and a gap is worse than a repeat.
    static let overlap = TimeSpan.seconds(5)

    var isLocator: Bool { state.withLock { $0.locator } }

    func setLocator(_ locator: Bool) { state.withLock { $0.locator = locator } }

    func role(webhook: String) -> DeliveryRole {
        state.withLock { s in
            s.locator ? .deliver : .standby(keepFrom: s.delivered[webhook].map { $0 - Self.overlap })
        }
    }

    /// A worker of this gateway delivered `webhook` through an event enqueued at `through`.
    func deliveredHere(webhook: String, through: Timestamp) {
        state.withLock { s in
            s.toPublish[webhook] = max(s.toPublish[webhook] ?? through, through)
            s.delivered[webhook] = max(s.delivered[webhook] ?? through, through)
        }
    }

    /// What to publish on `delivered/<webhook>`, once each.
    func takeToPublish() -> [String: Timestamp] {
        state.withLock { s in
            defer { s.toPublish = [:] }
            return s.toPublish
        }
    }

    /// The locator says it delivered `webhook` through `through`.
    func deliveredElsewhere(webhook: String, through: Timestamp) {
        state.withLock { s in
            guard s.delivered[webhook] != nil || s.delivered.count < Self.maxWebhooks else { return }
            s.delivered[webhook] = max(s.delivered[webhook] ?? through, through)
        }
    }

    /// `{"through":1763805600.25}`.
    static func text(_ through: Timestamp) -> String {
        var w = JSONTextWriter()
        w.openObject()
        w.member("through", through.unixSeconds)
        w.closeObject()
        return w.text
    }

    static func through(_ payload: String) -> Timestamp? {
        guard let value = try? JSONParser.parse(payload), let t = value["through"]?.numberValue else { return nil }
        return Timestamp(unixSeconds: t)
    }
}
