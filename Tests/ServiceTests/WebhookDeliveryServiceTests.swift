import BeaconConfig
import BeaconCore
import Foundation
import Logs
import Publishing
import Storage
import TestSupport
import Testing

@testable import beacond

/// A reload's webhooks in process (issue 54, item 5): an unchanged webhook keeps its worker,
/// a changed one gets a new worker, a removed one dead-letters its backlog after its last
/// attempt — what `WebhookReloadTests` checks through a daemon, here in milliseconds.
@Suite struct WebhookDeliveryServiceTests {
    static let start = Timestamp.seconds(1_763_805_600)

    static func config(_ webhooks: String) throws -> Config {
        try ConfigLoader.load(yaml: "gateway: {id: gw1}\nwebhooks:\n" + webhooks, file: "beacond.yaml")
    }

    /// Port 9 on loopback: nothing listens, a delivery fails at once and is retried later.
    static let crm = "  - {id: crm, url: \"http://127.0.0.1:9/crm\"}\n"
    static let wms = "  - {id: wms, url: \"http://127.0.0.1:9/wms\"}\n"
    static let wmsMoved = "  - {id: wms, url: \"http://127.0.0.1:9/wms-v2\"}\n"
    static let erp = "  - {id: erp, url: \"http://127.0.0.1:9/erp\"}\n"

    static func settings(_ specs: [WebhookSpec]) -> [WebhookWorker.Settings] {
        specs.map {
            WebhookWorker.Settings(
                id: $0.id, url: $0.url, events: EventTypeGlob($0.events), secret: nil,
                schedule: DeliverySchedule(maxEvents: 50, maxDelay: .seconds(0), maxAge: $0.maxAge),
                timeout: .seconds(1))
        }
    }

    @Test func aReloadKeepsTheUnchangedReplacesTheChangedAndRetiresTheRemoved() throws {
        let start = Self.start
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        let make: @Sendable (WebhookWorker.Settings) -> WebhookWorker = {
            WebhookWorker(settings: $0, store: store, clock: { start }, logger: .silent)
        }
        let first = try Self.config(Self.crm + Self.wms + Self.erp)
        let publisher = EventPublisher(
            gateway: "gw1", store: store, workers: Self.settings(first.webhooks).map(make), echo: false,
            clock: { start }, logger: .silent)
        let service = WebhookDelivery(
            publisher: publisher, store: store, logger: .silent, settings: Self.settings, makeWorker: make)
        try service.start()
        defer { service.stop() }
        // A backlog for the webhook about to be removed.
        try store.append(
            [StateStore.StoredEvent(id: "01E1", type: "beacond.zone.enter", time: start, body: #"{"id":"01E1"}"#)],
            at: start, webhooks: { _ in ["erp"] })
        let before = Dictionary(uniqueKeysWithValues: publisher.workers.map { ($0.settings.id, $0) })

        let told = service.apply(
            ConfigReload(from: first, to: try Self.config(Self.crm + Self.wmsMoved)), from: first)
        #expect(told["webhooks"]?.description == "1 started, 1 kept, 2 stopped")
        let after = Dictionary(uniqueKeysWithValues: publisher.workers.map { ($0.settings.id, $0) })
        #expect(after.keys.sorted() == ["crm", "wms"])
        #expect(after["crm"] === before["crm"], "an unchanged webhook keeps its worker")
        #expect(after["wms"] !== before["wms"] && after["wms"]?.settings.url == "http://127.0.0.1:9/wms-v2")
        before["erp"]!.waitUntilFinished()
        let dead = try store.deadLetters()
        #expect(dead.map(\.eventID) == ["01E1"] && dead.map(\.reason) == ["removed"])
        #expect(try store.outboxDepths().first { $0.webhook == "erp" }?.pending ?? 0 == 0)
    }
}
