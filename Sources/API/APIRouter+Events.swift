import APIModel
import BeaconConfig
import BeaconCore
import BeaconRuntime
import HTTPServer
import Publishing
import Storage

/// The event history and remote receivers' sightings.
extension APIRouter {
    /// `GET /v1/events?after=<id>&type=<glob>&limit=&since=&order=&before=`: the stored
    /// history, oldest first; `order=newest` newest first (paged with `before`); `since` an
    /// RFC 3339 time or a span back from now (`1h`, `30m`, `7d`).
    func events(_ query: [String: String]) -> HTTPReply {
        guard let store = context.store else {
            return Reply.error(503, "no_state_store", "the state store is unavailable, so there is no history")
        }
        var limit = 100
        if let text = query["limit"] {
            guard let n = Int(text), n >= 1, n <= 1000 else {
                return Reply.error(400, "bad_limit", "limit: expected an integer 1...1000, got \"\(text)\"")
            }
            limit = n
        }
        var order = StateStore.HistoryQuery(before: query["before"])
        switch query["order"] {
        case nil, "oldest": break
        case "newest": order.newestFirst = true
        case let other?:
            return Reply.error(400, "bad_order", "order: expected oldest or newest, got \"\(other)\"")
        }
        if let text = query["since"] {
            guard let since = Self.since(text, now: context.clock()) else {
                return Reply.error(
                    400, "bad_since",
                    "since: expected an RFC 3339 time (2026-11-26T08:00:00Z) or a span back from now (1h, 30m, 7d), "
                        + "\(RFC3339.supportedText), got \"\(text.prefix(40))\"")
            }
            order.since = since
        }
        do {
            let list = try store.events(
                after: query["after"], matching: query["type"].map(EventTypeGlob.init(list:)), limit: limit,
                order: order)
            // Each stored body is the event's JSON as it was written: sent as it is, not parsed
            // and written again.
            let next: JSONValue = list.count == limit ? .string(list.last!.id) : .null
            let body =
                "{\"events\":[" + list.map(\.body).joined(separator: ",") + "],\"next\":" + next.serialized + "}\n"
            return .response(HTTPResponse(status: 200, contentType: "application/json", body: body))
        } catch {
            return Reply.error(500, "store_unreadable", "\(error)")
        }
    }

    /// `since`: an RFC 3339 time, or a span (`1h`) back from `now`; nil when it is neither, or
    /// names a time outside `RFC3339.supported` (the answers that follow step through the span).
    public static func since(_ text: String, now: Timestamp) -> Timestamp? {
        if let span = TimeSpan(parsing: text), span.nanoseconds > 0 {
            let t = now - span
            return span.nanoseconds < now.nanoseconds && RFC3339.supported.contains(t) ? t : nil
        }
        return RFC3339.parse(text)
    }

    /// `POST /v1/sightings`: JSON Lines of sighting records from another receiver. Good lines
    /// are taken even when others are bad; each bad line is reported with its number.
    func sightings(_ body: [UInt8]) -> HTTPReply {
        var accepted: [Sighting] = []
        var rejected: [JSONValue] = []
        var rejectedCount = 0
        var lineNumber = 0
        var reader = SightingLineReader()
        for line in body.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { continue }
            do {
                accepted.append(try reader.read(line))
            } catch {
                rejectedCount += 1
                if rejected.count < 100 {
                    rejected.append(.object([("line", .int(lineNumber)), ("error", .string(error.reason))]))
                }
            }
        }
        // In the order they were heard, whatever order the relay sent them in: each counts at
        // its own time (`RegionMonitor.sighted(at:heard:)`).
        accepted.sort { $0.time < $1.time }
        if !accepted.isEmpty, !context.ingest(accepted) {
            // Not taken: the relay keeps them and sends them again, rather than being told
            // they were accepted.
            var reply = Reply.error(
                503, "engine_behind",
                "the engine has \(LiveEngine.queuedSightingsLimit) sightings waiting; none of these \(accepted.count) "
                    + "were taken: send them again in a second")
            if case var .response(response) = reply {
                response.headers.append((name: "Retry-After", value: "1"))
                reply = .response(response)
            }
            return reply
        }
        var members: [(String, JSONValue)] = [
            ("accepted", .int(accepted.count)), ("rejected", .int(rejectedCount)), ("errors", .array(rejected)),
        ]
        members += relayClockReport(accepted)
        let result: JSONValue = .object(members)
        // 422 when nothing was usable, so a relay with a broken encoder notices at once.
        if accepted.isEmpty && rejectedCount > 0, case let .object(first)? = rejected.first {
            let line = first[0].1.numberValue.map { Int($0) } ?? 0
            let reason = first[1].1.stringValue ?? ""
            return Reply.error(
                422, "invalid_sightings",
                "none of \(rejectedCount) lines was a sighting record; line \(line): \(reason)")
        }
        return Reply.json(result, status: 202)
    }

    /// A webhook's delivery state, for status and `GET /v1/webhooks`.
    static func webhook(_ worker: WebhookWorker, depths: [StateStore.OutboxDepth]) -> StatusReport.Webhook {
        let c = worker.counters
        let depth = depths.first { $0.webhook == worker.settings.id }
        var w = StatusReport.Webhook()
        // Credentials in the URL stay out of every answer (`URLRedaction`).
        (w.id, w.url) = (worker.settings.id, URLRedaction.redact(worker.settings.url))
        w.state = c.disabled != nil ? .disabled : (c.retryAt != nil ? .retrying : .ok)
        w.pending = depth?.pending ?? 0
        w.oldest = depth?.oldest.map(RFC3339.format)
        w.deadLetters = depth?.deadLetters ?? 0
        w.deadLettersDiscarded = depth?.deadLettersDiscarded ?? 0
        (w.delivered, w.failedRequests) = (c.delivered, c.requestsFailed)
        (w.positionsWaiting, w.positionsConflated) = (c.positionsWaiting, c.positionsConflated)
        (w.lastError, w.lastErrorAt) = (c.lastError, c.lastErrorAt.map(RFC3339.format))
        (w.retryAt, w.disabled) = (c.retryAt.map(RFC3339.format), c.disabled)
        return w
    }
}
