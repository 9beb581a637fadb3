import BeaconConfig
import BeaconCore
import BeaconRuntime
import HTTPServer
import Publishing
import Storage
import Synchronization

/// `GET /v1/events/stream`: Server-Sent Events, live, with resumption.
///
/// A client that sends `Last-Event-ID` (or `?after=`) first gets every stored event after
/// that id, then the live ones, with no gap and no duplicate: the subscriber is registered
/// (buffering live events) before the history is read, and buffered events at or before the
/// last replayed id are skipped when it goes live. Ids sort in publication order, which is
/// what makes the comparison valid.
///
/// The history is sent a page at a time as the client reads it (`HTTPServer.notifyWhenDrained`),
/// never queued whole: a client resuming from the start of a long history that then stops
/// reading holds one page, not the history. Live events that come meanwhile wait in memory
/// up to `pendingLimit`; past that they are let go and read from the history with the rest.
///
/// A client that stops reading is dropped by the server when its unsent output passes the
/// stream limit; publishing only queues bytes and never waits for a client.
public final class EventStreamHub: Sendable {
    struct Subscriber {
        var glob: EventTypeGlob?
        var lastID: String?
        /// False while the history is being replayed; live events wait in `pending`.
        var live: Bool
        var pending: [StateStore.StoredEvent] = []
        /// Live events came past `pendingLimit` during the replay and were let go: the
        /// replay reads on until the history has them too.
        var pendingOverflowed = false
    }

    private let store: StateStore?
    private let server = Mutex<HTTPServer?>(nil)
    private let subscribers = Mutex<[StreamID: Subscriber]>([:])
    private let lastHeartbeat = Mutex<Int>(0)
    /// Seconds between keep-alive comments, which also reveal clients that went away.
    public static let heartbeatSeconds = 15
    /// Events of the history sent at a time to a resuming client.
    static let pageEvents = 100
    /// Rows read at most for one page (a type filter that matches few rows).
    static let pageRows = 5000
    /// Live events kept for a client still reading the history.
    static let pendingLimit = 1000

    public init(store: StateStore?) { self.store = store }

    /// What the server that carries the hub's streams tells it: a stream closed or drained,
    /// and the tick its heartbeats go out on (given to the server at its construction).
    public var serverHooks: HTTPServer.Hooks {
        HTTPServer.Hooks(
            onStreamClosed: { [weak self] id in self?.closed(id) },
            onStreamDrained: { [weak self] id in self?.replayPage(id) }, onTick: { [weak self] in self?.tick() })
    }

    /// Connects the hub to the server that carries its streams (made with `serverHooks`).
    public func attach(_ server: HTTPServer) {
        self.server.withLock { $0 = server }
    }

    public var count: Int { subscribers.withLock { $0.count } }

    func open(_ request: HTTPRequest) -> HTTPReply {
        let resume = request.header("last-event-id") ?? request.query["after"]
        let glob = request.query["type"].map(EventTypeGlob.init(list:))
        let head = HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream")])
        return .stream(head: head) { [self] id in
            subscribers.withLock { $0[id] = Subscriber(glob: glob, lastID: resume, live: resume == nil) }
            send(Array("retry: 2000\n: beacond event stream\n\n".utf8), to: id)
            if resume != nil { replayPage(id) }
        }
    }

    /// Sends the next page of stored events after the subscriber's id and asks to be called
    /// again once the client has read it; at the history's end, takes the subscriber live.
    /// Runs on the server's thread.
    private func replayPage(_ id: StreamID) {
        guard let subscriber = subscribers.withLock({ $0[id] }), !subscriber.live else { return }
        var cursor = subscriber.lastID
        if let store {
            do {
                let page = try store.eventsPage(
                    after: cursor, matching: subscriber.glob, limit: Self.pageEvents, scanLimit: Self.pageRows)
                cursor = page.cursor
                if !page.events.isEmpty { send(Self.render(page.events), to: id) }
                if !page.atEnd {
                    subscribers.withLock { $0[id]?.lastID = cursor }
                    server.withLock { $0 }?.notifyWhenDrained(id)
                    return
                }
            } catch {
                send(Array(": history unavailable: \(error)\n\n".utf8), to: id)
            }
        }
        let catchUp = subscribers.withLock { all -> [StateStore.StoredEvent]? in
            guard var s = all[id] else { return [] }
            s.lastID = cursor
            if s.pendingOverflowed {
                // Live events were let go meanwhile: the history has them; read on.
                s.pendingOverflowed = false
                s.pending = []
                all[id] = s
                return nil
            }
            let pending = s.pending.filter { event in cursor.map { event.id > $0 } ?? true }
            s.pending = []
            s.live = true
            s.lastID = pending.last?.id ?? cursor
            all[id] = s
            return pending
        }
        guard let catchUp else { return server.withLock { $0 }?.notifyWhenDrained(id) ?? () }
        if !catchUp.isEmpty { send(Self.render(catchUp), to: id) }
    }

    /// Called with every stored batch, on the engine's thread.
    public func publish(_ events: [StateStore.StoredEvent]) {
        guard !events.isEmpty else { return }
        // Subscribers with the same filter share one selection and one rendering.
        var selections: [[String]?: [StateStore.StoredEvent]] = [:]
        var groups: [[String]?: [StreamID]] = [:]
        subscribers.withLock { all in
            for (id, var s) in all {
                let key = s.glob?.patterns
                let wanted =
                    selections[key]
                    ?? {
                        let selected = s.glob.map { g in events.filter { g.matches(type: $0.type) } } ?? events
                        selections[key] = selected
                        return selected
                    }()
                guard !wanted.isEmpty else { continue }
                if s.live {
                    s.lastID = wanted.last!.id
                    groups[key, default: []].append(id)
                } else if s.pending.count + wanted.count > Self.pendingLimit {
                    s.pending = []
                    s.pendingOverflowed = true
                } else {
                    s.pending += wanted
                }
                all[id] = s
            }
        }
        let server = self.server.withLock { $0 }
        for (key, ids) in groups { server?.send(Self.render(selections[key]!), to: ids) }
    }

    private func closed(_ id: StreamID) {
        _ = subscribers.withLock { $0.removeValue(forKey: id) }
    }

    private func tick() {
        let now = Int(monotonicSeconds())
        let due = lastHeartbeat.withLock { last -> Bool in
            guard now - last >= Self.heartbeatSeconds else { return false }
            last = now
            return true
        }
        guard due else { return }
        let ids = subscribers.withLock { Array($0.keys) }
        server.withLock { $0 }?.send(Array(": keep-alive\n\n".utf8), to: ids)
    }

    private func send(_ bytes: [UInt8], to id: StreamID) {
        server.withLock { $0 }?.send(bytes, to: id)
    }

    /// `id:`, `event:` and `data:` lines per event (the JSON is one line).
    static func render(_ events: [StateStore.StoredEvent]) -> [UInt8] {
        var text = ""
        for e in events {
            text += "id: \(e.id)\nevent: \(e.type)\ndata: \(e.body)\n\n"
        }
        return Array(text.utf8)
    }
}
