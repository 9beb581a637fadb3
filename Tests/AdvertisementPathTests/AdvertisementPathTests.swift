import BeaconCore
import BlueZFixtures
import Foundation
import Logs
import Storage
import TestSupport
import Testing

@testable import BlueZ
@testable import Publishing

/// ARCHITECTURE.md's "The path of one advertisement" is the path: one advertisement, marshalled
/// by libdbus as bluetoothd sends it, taken through the calls the list names, in its order, to
/// the request a webhook receives; and the list names exactly these steps. A step added to the
/// path is a step added to this test and to the list, or the list is wrong.
@Suite struct AdvertisementPathTests {
    /// The steps, as the list names them (the first name in code of each item).
    static let steps = [
        "DeviceSignal.parse", "DeviceRecord.apply", "DeviceRecord.sighting", "BeaconDecoder", "RegionMonitor",
        "CloudEvent.text", "StateStore.commit", "StateStore.pending", "SignedRequest",
    ]

    static func documented() throws -> [String] {
        let text = try String(
            contentsOf: Executables.packageRoot.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        let section = text.components(separatedBy: "## The path of one advertisement")[1]
            .components(separatedBy: "\n## ")[0]
        return section.split(separator: "\n").compactMap { line -> String? in
            guard line.first?.isNumber == true else { return nil }
            let parts = line.split(separator: "`", omittingEmptySubsequences: false)
            return parts.count > 1 ? String(parts[1]) : nil
        }
    }

    @Test func theDocumentedStepsAreTheStepsTaken() throws {
        #expect(try Self.documented() == Self.steps)
    }

    static let uuid = BeaconUUID("ABABABAB-ABAB-ABAB-ABAB-ABABABABABAB")!
    static let payload: [UInt8] = [0x02, 0x15] + Array(repeating: 0xAB, count: 16) + [0, 42, 0, 7, 0xC5]

    static func wire() -> [UInt8] {
        DeviceSignalFixture.wireBytes(
            consuming: DeviceSignalFixture.propertiesChanged(
                path: "/org/bluez/hci0/dev_C3_11_22_33_44_55", interface: "org.bluez.Device1", rssi: -61,
                manufacturerData: [(0x004C, payload)], serviceData: [], name: nil, paired: false, uuids: []))
    }

    @Test func oneAdvertisementFromTheWireToAWebhooksRequest() throws {
        let t = Timestamp.seconds(1_763_805_600)
        // 1–3: the scanner's thread.
        let update = try #require(Self.wire().withUnsafeBytes { DeviceSignal.parse($0) }?.update)
        var record = DeviceRecord(
            device: try #require(DevicePath("/org/bluez/hci0/dev_C3_11_22_33_44_55")), receiver: "rx-front",
            lastHeard: t)
        let advertised = record.apply(update)
        #expect(advertised)
        let sighting = try #require(record.sighting(at: t))
        #expect(sighting.receiver == "rx-front" && sighting.rssi == -61)

        // 4–5: the engine's turn.
        guard case let .success(frame) = BeaconDecoder.decode(sighting.data), case let .iBeacon(beacon) = frame else {
            Issue.record("not decoded as an iBeacon")
            return
        }
        #expect(beacon.id == IBeaconID(uuid: Self.uuid, major: 42, minor: 7))
        var settings = MonitoringSettings()
        settings.enterSightings = 1
        var engine = BeaconEngine(
            configuration: EngineConfiguration(
                monitoring: settings,
                clients: [ClientSpec(id: "app", regions: [RegionSpec(id: "shelf", uuid: Self.uuid)])], receivers: [:]),
            start: t)
        // Determined outside first: a region's first decision is a state, not an enter.
        _ = engine.advance(to: t + .seconds(30))
        var heard = sighting
        heard.time = t + .seconds(40)
        let events = engine.ingest(heard).filter { $0.payload.kind == "region.enter" }
        #expect(events.count == 1)

        // 6–7: published, its body stored once for the history and the webhook's outbox.
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        let hook = WebhookWorker.Settings(
            id: "crm", url: "http://127.0.0.1:9/hook", events: EventTypeGlob(["*"]), secret: Array("k".utf8),
            signature: .beacond, schedule: DeliverySchedule(maxEvents: 10, maxDelay: .seconds(0), maxAge: .hours(1)),
            timeout: .seconds(5))
        let worker = WebhookWorker(settings: hook, store: store, clock: { t }, logger: .silent)
        let publisher = EventPublisher(
            gateway: "gw1", store: store, workers: [worker], echo: false, clock: { t }, logger: .silent)
        publisher.publish(events)
        #expect(try store.events().map(\.type) == ["beacond.region.enter"])

        // 8–9: the worker's thread.
        let batch = try store.pending(webhook: "crm", limit: 10)
        #expect(batch.count == 1)
        let request = try SignedRequest(hook, events: batch.map(\.body), at: t, messageID: batch[0].eventID)
        let sent = try #require(
            try JSONSerialization.jsonObject(with: Data(request.body)) as? [[String: Any]])
        let data = try #require(sent.first?["data"] as? [String: Any])
        #expect(sent.first?["type"] as? String == "beacond.region.enter")
        #expect(data["receiver"] as? String == "rx-front" && data["rssi"] as? Int == -61)
        #expect(request.headers.contains { $0.hasPrefix("X-Beacond-Signature: sha256=") })
    }
}
