import BeaconCore
import Foundation
import Logs
import Storage
import Synchronization
import TestSupport
import Testing

@testable import Publishing

/// The outbox worker's rules over a transport that answers as it is told (issue 39, item 3):
/// what a refused batch, a 410 and a stop do to the outbox, in process and in milliseconds.
/// The real receivers stay in the daemon tests (`WebhookDeliveryTests` over HTTP,
/// `SiteOutputTests` over a real mosquitto), one per guarantee; the rules are shown here.
@Suite struct OutboxWorkerTests {
    static let start = Timestamp.seconds(1_763_805_600)

    /// Takes or refuses each batch as `answers` says, in turn (then takes all), and keeps
    /// every batch it was given.
    final class ScriptedTransport: BatchTransport, Sendable {
        let answers: Mutex<[DeliveryFailure?]>
        let batches = Mutex<[[String]]>([])
        let abortedBeforeSend = Mutex<[Bool]>([])
        let aborted = Atomic<Bool>(false)

        init(_ answers: [DeliveryFailure?]) { self.answers = Mutex(answers) }

        func send(_ batch: [StateStore.OutboxEntry], timeout: TimeSpan) throws(DeliveryFailure) {
            batches.withLock { $0.append(batch.map(\.eventID)) }
            abortedBeforeSend.withLock { $0.append(aborted.load(ordering: .relaxed)) }
            let answer = answers.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            if let answer { throw answer }
        }

        func abort(after wait: TimeSpan) { aborted.store(true, ordering: .relaxed) }
    }

    static func store(events ids: [String]) throws -> StateStore {
        let store = try StateStore(directory: NSTemporaryDirectory() + "beacond-outbox-\(UUID().uuidString)")
        try store.append(
            ids.enumerated().map { i, id in
                .init(id: id, type: "beacond.zone.enter", time: start + .seconds(Int64(i)), body: "{\"id\":\"\(id)\"}")
            }, at: start, webhooks: { _ in ["crm"] })
        return store
    }

    static func worker(
        _ store: StateStore, _ transport: ScriptedTransport, hooks: WebhookWorker.Hooks = .init()
    ) -> WebhookWorker {
        WebhookWorker(
            settings: .init(
                id: "crm", url: "http://127.0.0.1:9/hook", events: EventTypeGlob(["*"]), secret: nil,
                schedule: DeliverySchedule(maxEvents: 10, maxDelay: .seconds(0), maxAge: .hours(1)),
                timeout: .seconds(1)),
            store: store, clock: { Self.start + .seconds(10) }, logger: .silent, transport: transport, hooks: hooks)
    }

    /// A refused batch stays in the outbox and is sent again whole, in order, until taken;
    /// then the outbox is empty and the counters say what happened.
    @Test func aRefusedBatchIsSentAgainWholeUntilTaken() throws {
        let store = try Self.store(events: ["e1", "e2", "e3"])
        let transport = ScriptedTransport([.refused("the broker refused the events: not authorized"), .status(503)])
        let worker = Self.worker(store, transport)
        Thread { worker.run() }.start()
        defer {
            worker.stop()
            worker.waitUntilFinished()
        }
        for attempt in 1...2 {
            try eventually("attempt \(attempt)") { transport.batches.withLock { $0.count } >= attempt }
            try eventually("its failure counted") { worker.counters.requestsFailed == attempt }
            #expect(try store.pending(webhook: "crm", limit: 10).map(\.eventID) == ["e1", "e2", "e3"])
            worker.retryNow()
        }
        try eventually("the outbox emptied") { try store.pending(webhook: "crm", limit: 10).isEmpty }
        #expect(transport.batches.withLock { $0 } == Array(repeating: ["e1", "e2", "e3"], count: 3))
        // The worker counts a delivery once the store has taken its acknowledgement: wait for
        // that, not only for the outbox (a loaded CI machine saw the outbox empty first).
        try eventually("the delivery counted") { worker.counters.requestsOK == 1 }
        let counters = worker.counters
        #expect(counters.delivered == 3 && counters.requestsOK == 1 && counters.requestsFailed == 2)
        #expect(counters.lastError == "HTTP 503" && counters.disabled == nil)
    }

    /// A 410 disables the webhook: what waits becomes dead letters (`gone`), nothing is sent
    /// again, and the webhook stays disabled for its url across a new worker (a restart).
    @Test func aGoneReceiverDisablesTheWebhookAndItsEventsAreDeadLetters() throws {
        let store = try Self.store(events: ["e1", "e2"])
        let transport = ScriptedTransport([.status(410)])
        let worker = Self.worker(store, transport)
        Thread { worker.run() }.start()
        try eventually("the webhook disabled") { worker.isDisabled }
        worker.retryNow()
        try stays("no second attempt", for: 0.3) { transport.batches.withLock { $0.count } == 1 }
        worker.stop()
        worker.waitUntilFinished()
        #expect(try store.pending(webhook: "crm", limit: 10).isEmpty)
        #expect(try store.deadLetters().map(\.reason) == ["gone", "gone"])
        #expect(Self.worker(store, ScriptedTransport([])).isDisabled)
    }

    /// A worker stopped before it ran (a reload's successor, then SIGTERM) makes its last
    /// attempt with the transport already told to give up within the stop's budget: a
    /// receiver that hangs cannot hold the stop.
    @Test func aStopBeforeTheFirstSendBoundsTheLastAttempt() throws {
        let store = try Self.store(events: ["e1"])
        let transport = ScriptedTransport([.unreachable("timed out")])
        let worker = Self.worker(store, transport)
        worker.stop()
        worker.run()
        #expect(transport.abortedBeforeSend.withLock { $0 } == [true])
        #expect(try store.pending(webhook: "crm", limit: 10).map(\.eventID) == ["e1"])
    }
}
