/// An alert as the site's locator decided it, told to the other gateways before it is
/// delivered anywhere (`gateways/<locator>/decided`, SPEC §6.3).
///
/// Why the locator's decisions travel, and not only how far it delivered: every gateway's
/// engine makes the site's events, but each under its own ids and at its own instant (a batch
/// waits up to 250 ms, a lost one changes a smoothed RSSI), so after a hand-over the next
/// locator could only guess, by time, which of its own alerts the last one had delivered — and
/// it re-sent 10 of them under new ids that no consumer could de-duplicate. With the
/// decisions in hand, each standby puts the locator's id and body on its own copy of the same
/// alert (matched by `key`, `HandOverMatcher`); what the old locator delivered is then dropped
/// by id, and what it had in flight goes out again with the same id.
public struct SiteDecision: Sendable, Equatable {
    /// The locator's CloudEvents id.
    public var id: String
    /// What makes two gateways' events the same alert: type, subject, zone and alarm.
    public var key: HandOverKey
    /// The event's time.
    public var time: Timestamp
    /// When the locator put it in its outbox (its clock): its `delivered` marks count in these.
    public var enqueuedAt: Timestamp
    /// The CloudEvent as the locator delivers it.
    public var body: String
    /// The gateway that decided it (the topic it came on; not in the message).
    public var decider = ""

    public init(id: String, key: HandOverKey, time: Timestamp, enqueuedAt: Timestamp, body: String) {
        self.id = id
        self.key = key
        self.time = time
        self.enqueuedAt = enqueuedAt
        self.body = body
    }

    /// Event types that are not handed over by id (`EventClass`): positions, ranging and
    /// proximity are replaced within seconds and not worth a message each; an adapter's state
    /// is its own gateway's.
    public static let notHandedOver =
        EventClass.measurement.types + EventClass.position.types + EventClass.local.types

    public static func handedOver(type: String) -> Bool { EventClass(type: type).isHandedOver }

    /// A stored event of this gateway's as a decision (its time read from the body); nil when
    /// the body is not a CloudEvent.
    public init?(id: String, body: String, enqueuedAt: Timestamp) {
        guard let event = try? JSONParser.parse(body), let key = HandOverKey(event: event),
            let time = event["time"]?.stringValue.flatMap(RFC3339.parse)
        else { return nil }
        self.init(id: id, key: key, time: time, enqueuedAt: enqueuedAt, body: body)
    }
}

extension SiteDecision {
    /// One line of a `decided` message: `{"id":…,"key":…,"time":…,"enqueued":…,"body":"…"}`.
    public var line: String {
        var w = JSONTextWriter(capacity: body.utf8.count + 128)
        w.openObject()
        w.member("id", id)
        w.member("key", key.text)
        w.member("time", time.unixSeconds)
        w.member("enqueued", enqueuedAt.unixSeconds)
        w.member("body", body)
        w.closeObject()
        return w.text
    }

    /// A `decided` message: one decision per line.
    public static func message(_ decisions: [SiteDecision]) -> String {
        decisions.map(\.line).joined(separator: "\n")
    }

    /// The decisions of a `decided` message; nil when any line is not one, or (given `source`)
    /// its event is not of that source (the message is refused whole: it comes from a gateway,
    /// and a gateway does not send half-good ones).
    public static func decisions(in payload: String, source: String? = nil) -> [SiteDecision]? {
        var out: [SiteDecision] = []
        for line in payload.split(separator: "\n", omittingEmptySubsequences: true) {
            guard let v = try? JSONParser.parse(String(line)), let id = v["id"]?.stringValue,
                Identifier.problem(id) == nil, let text = v["key"]?.stringValue, let time = v["time"]?.numberValue,
                let enqueued = v["enqueued"]?.numberValue, let body = v["body"]?.stringValue,
                let event = try? JSONParser.parse(body), let key = HandOverKey(event: event), key.text == text,
                source == nil || event["source"]?.stringValue == source,
                let time = Timestamp(unixSeconds: time),
                let enqueued = Timestamp(unixSeconds: enqueued)
            else { return nil }
            out.append(SiteDecision(id: id, key: key, time: time, enqueuedAt: enqueued, body: body))
        }
        return out
    }
}
