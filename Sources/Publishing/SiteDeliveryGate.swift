import BeaconCore
import Synchronization

/// Which gateway of a site delivers its webhooks (SPEC §6.3), shared by the webhook workers
/// and the site link.
///
/// The locator delivers, but only what the other gateways have been told of: each batch of
/// its alerts goes to `gateways/<id>/decided` first, and its workers send an entry once the
/// broker has acknowledged that (`told`, `answered`). After each delivery it says how far it
/// got on its own retained `gateways/<id>/delivered/<webhook>`. The others stand by: their
/// copies of its alerts carry its ids (`HandOverMatcher`), and go when its mark passes them.
/// When the locator dies, the next one delivers what is left — what the old one had in
/// flight, under the same ids, and nothing it had delivered.
public final class SiteDeliveryGate: Sendable {
    private struct State {
        var locator = false
        /// Each gateway's `delivered` marks (this one's too), by webhook, then gateway.
        var marks: [String: [String: Timestamp]] = [:]
        /// This gateway's own deliveries (as the locator), not yet published.
        var toPublish: [String: Timestamp] = [:]
        /// Every alert enqueued up to this time has been told to the site.
        var toldThrough: Timestamp
        /// Batches of decisions published, oldest first, with the message ids the broker has
        /// not answered yet.
        var telling: [(through: Timestamp, waiting: Set<Int32>, sent: Timestamp)] = []
    }

    /// This gateway.
    public let gateway: String
    private let state: Mutex<State>
    /// At most this many webhooks' marks, and of gateways per webhook: ids come from the network.
    public static let maxWebhooks = 1024
    public static let maxGateways = 256
    /// A standby keeps this much of its own alerts before the locator's last delivery: the
    /// gateways' engines make the same event at slightly different times, and an alert the
    /// locator has not decided yet must not be dropped.
    public static let overlap = TimeSpan.seconds(5)
    /// A mark further ahead of this gateway's clock than this is refused: no gateway delivered
    /// in the future (NTP keeps a store's clocks within milliseconds), and one forged mark of
    /// "a year from now" would otherwise empty every standby's outbox.
    public static let markAhead = TimeSpan.seconds(30)
    /// A decision the broker has not answered within this is given up waiting for (the
    /// connection dropped with it in flight): the locator delivers rather than stall.
    public static let tellTimeout = TimeSpan.seconds(5)

    public init(gateway: String, now: Timestamp) {
        self.gateway = gateway
        state = Mutex(State(toldThrough: now))
    }

    public var isLocator: Bool { state.withLock { $0.locator } }

    /// Becoming the locator, nothing of this gateway's is sent until the alerts it made as a
    /// standby (its own ids, told to no one) have been told (`backlogTold`): its first
    /// deliveries would otherwise be alerts the others hold under their own ids, and the next
    /// hand-over would repeat them.
    public func setLocator(_ locator: Bool, at now: Timestamp) {
        state.withLock { s in
            if locator, !s.locator {
                s.telling.insert((s.toldThrough, [Self.backlog], now), at: 0)
                s.toldThrough = Timestamp(nanoseconds: .min / 2)
            }
            s.locator = locator
        }
    }

    /// This gateway's own alerts enqueued before this are ones no locator decided: the others'
    /// furthest `delivered` mark on any webhook, less the overlap. Every webhook's, not the
    /// one asking's: a locator tells each alert before it delivers on any of them, so one it
    /// had not told by its furthest delivery is not the site's alert anywhere. (Judged per
    /// webhook, a receiver that was down kept such an alert where the broker's outbox had
    /// dropped it, and the next locator told the webhook an exit the broker never had.)
    /// nil: nothing known of the others' deliveries yet.
    public var undecidedBefore: Timestamp? { state.withLock { Self.undecidedBefore($0, except: gateway) } }

    private static func undecidedBefore(_ s: State, except gateway: String) -> Timestamp? {
        var furthest: Timestamp?
        for byGateway in s.marks.values {
            for (other, mark) in byGateway where other != gateway { furthest = max(furthest ?? mark, mark) }
        }
        return furthest.map { $0 - overlap }
    }

    /// The stand-in message id of the backlog, until its messages are published.
    private static let backlog: Int32 = -1

    /// The standby-time alerts were published as messages `waiting` (none: there were none).
    public func backlogTold(waiting: Set<Int32>, at now: Timestamp) {
        state.withLock { s in
            guard let i = s.telling.firstIndex(where: { $0.waiting.contains(Self.backlog) }) else { return }
            s.telling[i].waiting = waiting
            s.telling[i].sent = now
        }
        answered(Self.backlog)
    }

    public func role(webhook: String, at now: Timestamp) -> DeliveryRole {
        state.withLock { s in
            var others = s.marks[webhook] ?? [:]
            others[gateway] = nil
            guard s.locator else { return .standby(keepFrom: Self.undecidedBefore(s, except: gateway), marks: others) }
            while let first = s.telling.first, now - first.sent > Self.tellTimeout {
                s.toldThrough = max(s.toldThrough, first.through)
                s.telling.removeFirst()
            }
            return .locator(through: s.toldThrough, marks: others)
        }
    }

    /// The alerts of a batch enqueued at `through` were published to the site as messages
    /// `waiting` (none: nothing to tell, or not the locator).
    public func told(through: Timestamp, waiting: Set<Int32>, at now: Timestamp) {
        state.withLock { s in
            if waiting.isEmpty, s.telling.isEmpty {
                s.toldThrough = max(s.toldThrough, through)
            } else {
                s.telling.append((through, waiting, now))
            }
        }
    }

    /// The broker answered message `mid` (took it or refused it: either way, waiting longer
    /// would not help).
    public func answered(_ mid: Int32) {
        state.withLock { s in
            guard !s.telling.isEmpty else { return }
            for i in s.telling.indices { s.telling[i].waiting.remove(mid) }
            while let first = s.telling.first, first.waiting.isEmpty {
                s.toldThrough = max(s.toldThrough, first.through)
                s.telling.removeFirst()
            }
        }
    }

    /// A worker of this gateway delivered `webhook` through an event enqueued at `through`.
    public func deliveredHere(webhook: String, through: Timestamp) {
        state.withLock { s in
            s.toPublish[webhook] = max(s.toPublish[webhook] ?? through, through)
            s.marks[webhook, default: [:]][gateway] = max(s.marks[webhook]?[gateway] ?? through, through)
        }
    }

    /// What to publish on `gateways/<id>/delivered/<webhook>`, once each.
    public func takeToPublish() -> [String: Timestamp] {
        state.withLock { s in
            defer { s.toPublish = [:] }
            return s.toPublish
        }
    }

    /// Gateway `from` says it delivered `webhook` through `through`; false when refused (too
    /// far ahead, or too many webhooks or gateways).
    @discardableResult
    public func deliveredElsewhere(from: String, webhook: String, through: Timestamp, at now: Timestamp) -> Bool {
        state.withLock { s in
            guard through - now <= Self.markAhead,
                s.marks[webhook] != nil || s.marks.count < Self.maxWebhooks,
                s.marks[webhook]?[from] != nil || (s.marks[webhook]?.count ?? 0) < Self.maxGateways
            else { return false }
            s.marks[webhook, default: [:]][from] = max(s.marks[webhook]?[from] ?? through, through)
            return true
        }
    }

    /// `{"through":1763805600.25}`.
    public static func text(_ through: Timestamp) -> String {
        var w = JSONTextWriter()
        w.openObject()
        w.member("through", through.unixSeconds)
        w.closeObject()
        return w.text
    }

    public static func through(_ payload: String) -> Timestamp? {
        guard let value = try? JSONParser.parse(payload), let t = value["through"]?.numberValue, t.isFinite,
            abs(t) < 1e11
        else { return nil }
        return Timestamp(unixSeconds: t)
    }
}
