/// What makes two gateways' events the same alert (SPEC §6.3): its type and subject, and for a
/// zone's events the zone and the alarm. Made from the engine's value as the event is
/// published; text (`type|subject|zone|alarm`) only on the wire, in a `decided` message.
///
/// Why typed: the key was text made by joining four strings per alert, and read back by
/// splitting it (`DecidedZones`) at every alert a locator decided (issue 54). A line's text is
/// only compared with the key of the body it carries; ids have no `|` (`Identifier`), nor do
/// event types, so two different keys never share a text.
public struct HandOverKey: Hashable, Sendable, CustomStringConvertible {
    /// The CloudEvents type, `beacond.zone.enter` and the like.
    public var type: String
    public var subject: String
    /// The zone of a zone alert or visit; empty for other events.
    public var zone: String
    /// The alarm of a zone alert; empty for other events.
    public var alarm: String

    public init(type: String, subject: String, zone: String = "", alarm: String = "") {
        (self.type, self.subject, self.zone, self.alarm) = (type, subject, zone, alarm)
    }

    /// The key of an event as the engine made it.
    public init(payload: EventPayload) {
        var zone = ""
        var alarm = ""
        switch payload {
        case let .zone(alert): (zone, alarm) = (alert.zone, alert.alarm)
        case let .zoneVisit(visit): zone = visit.zone
        default: break
        }
        self.init(type: "beacond." + payload.kind, subject: CloudEvent.subject(payload), zone: zone, alarm: alarm)
    }

    /// The key of a CloudEvent already parsed; nil when it has no type or subject.
    public init?(event: JSONValue) {
        guard let type = event["type"]?.stringValue, let subject = event["subject"]?.stringValue else { return nil }
        let data = event["data"]
        self.init(
            type: type, subject: subject, zone: data?["zone"]?.stringValue ?? "",
            alarm: data?["alarm"]?.stringValue ?? "")
    }

    /// The key of a stored CloudEvent's text; nil when it is not one.
    public init?(body: String) {
        guard let event = try? JSONParser.parse(body) else { return nil }
        self.init(event: event)
    }

    /// The wire's text: `type|subject|zone|alarm`.
    public var text: String { [type, subject, zone, alarm].joined(separator: "|") }
    public var description: String { text }
}
