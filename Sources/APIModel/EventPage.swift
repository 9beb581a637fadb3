import BeaconCore

/// `GET /v1/events`: a page of the history. The daemon writes each stored event's JSON as it
/// was first written (not parsed and written again), so this type only reads: `beaconctl
/// events` prints each event's envelope fields and keeps its `data` whole.
public struct EventPage: Sendable, Equatable {
    /// The CloudEvents envelope fields a person reads in a line, and the event as sent.
    public struct Event: Sendable, Equatable {
        public var id = "", type = "", time = "", subject = ""
        public var data: JSONValue = .null
        public var json: JSONValue = .null
        public init() {}

        public init(json: JSONValue) {
            self.init()
            self.json = json
            (id, type) = (json.string("id") ?? "", json.string("type") ?? "")
            (time, subject) = (json.string("time") ?? "", json.string("subject") ?? "")
            data = json["data"] ?? .null
        }
    }

    public var events: [Event] = []
    /// The `after` of the next page: the last event's id when the page was full.
    public var next: String?
    public init() {}

    public init(json: JSONValue) {
        self.init()
        events = json.array("events").map(Event.init(json:))
        next = json.string("next")
    }
}

/// Every refusal of the API: a stable code and a message that says what to change.
public struct APIErrorAnswer: Sendable, Equatable {
    public var code: String
    public var message: String

    /// Nil for a body that is not an error answer.
    public init?(json: JSONValue) {
        guard let error = json["error"], let code = error.string("code"), let message = error.string("message") else {
            return nil
        }
        (self.code, self.message) = (code, message)
    }
}
