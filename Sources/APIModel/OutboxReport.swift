import BeaconCore

/// `GET /v1/outbox`: each webhook's delivery state and the newest dead letters, with why
/// each died. Read back by `beaconctl outbox`.
public struct OutboxReport: Sendable, Equatable {
    /// An event given up on: which webhook, which event, when it was queued and died, why.
    public struct DeadLetter: Sendable, Equatable {
        public var webhook = "", id = "", type = ""
        public var enqueued: String?, dead: String?
        public var reason = ""
        public init() {}
    }

    public var webhooks: [StatusReport.Webhook] = []
    public var deadLetters: [DeadLetter] = []
    public init() {}
}

extension OutboxReport {
    public var json: JSONValue {
        .object([("webhooks", .array(webhooks.map(\.json))), ("dead_letters", .array(deadLetters.map(\.json)))])
    }

    public init(json: JSONValue) {
        self.init()
        webhooks = json.array("webhooks").map(StatusReport.Webhook.init(json:))
        deadLetters = json.array("dead_letters").map(DeadLetter.init(json:))
    }
}

extension OutboxReport.DeadLetter {
    public var json: JSONValue {
        .object([
            ("webhook", .string(webhook)), ("id", .string(id)), ("type", .string(type)),
            ("enqueued", .optional(enqueued)), ("dead", .optional(dead)), ("reason", .string(reason)),
        ])
    }

    public init(json: JSONValue) {
        self.init()
        webhook = json.string("webhook") ?? ""
        id = json.string("id") ?? ""
        type = json.string("type") ?? ""
        enqueued = json.string("enqueued")
        dead = json.string("dead")
        reason = json.string("reason") ?? ""
    }
}

/// `POST /v1/webhooks/{id}/test` when the receiver took the event: what it answered and how
/// fast, and whether the event was signed. Read back by `beaconctl test-webhook`.
public struct WebhookTestReport: Sendable, Equatable {
    public var webhook = "", url = ""
    public var status = 0
    public var tookMilliseconds = 0
    public var signed = false
    public init() {}

    public var json: JSONValue {
        .object([
            ("webhook", .string(webhook)), ("url", .string(url)), ("status", .int(status)),
            ("took_ms", .int(tookMilliseconds)), ("signed", .bool(signed)),
        ])
    }

    public init(json: JSONValue) {
        self.init()
        webhook = json.string("webhook") ?? ""
        url = json.string("url") ?? ""
        status = json.int("status")
        tookMilliseconds = json.int("took_ms")
        signed = json.bool("signed")
    }
}
