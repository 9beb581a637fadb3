import API
import APIModel
import BeaconConfig
import BeaconCore
import BeaconRuntime
import Foundation
import HTTPServer
import Logs
import Publishing
import Storage
import Synchronization
import Testing

/// Issue 39, item 5: every answer beaconctl reads is a type in APIModel. What the daemon's
/// router writes for each reads back through that type whole (`T(json: body).json == body`:
/// every key written is read, none is invented), so a key renamed on one side fails here, not
/// in an operator's terminal. docs/openapi.json is checked against the same answers on the
/// real daemon (OpenAPIContractTests).
@Suite struct APIAnswerTests {
    static let start = Timestamp.seconds(1_763_805_600)
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    /// A router over a running engine that has heard a cart from three receivers.
    final class Fixture {
        let router: APIRouter
        let engine: LiveEngine

        init() throws {
            let config = try ConfigLoader.load(
                yaml: """
                    gateway: {id: gw}
                    monitoring: {enter_sightings: 1, exit_timeout: 30s}
                    clients:
                      - id: app
                        regions:
                          - {id: till, uuid: \(APIAnswerTests.uuid), major: 42, dwell: [1m]}
                    receivers:
                      - {id: r1, position: {x: 0, y: 0}}
                      - {id: r2, position: {x: 10, y: 0}}
                      - {id: r3, position: {x: 0, y: 10, z: 2.5}}
                    assets:
                      - {id: cart-7, name: Cart 7, beacon: {uuid: \(APIAnswerTests.uuid), major: 42, minor: 7}}
                      - {id: pallet-1, beacon: {namespace: 00112233445566778899, instance: aabbccddeeff}}
                    zones:
                      - {id: dock, level: 0, polygon: [[0, 0], [6, 0], [6, 6], [0, 6]]}
                      - {id: door, receiver: r2, within: 2.5}
                    alarms:
                      - {id: dock-watch, zones: [dock], on: [enter, exit], assets: [cart-7]}
                      - {id: door-dwell, zones: [door], on: [dwell], dwell: 5m}
                    webhooks: [{id: crm, url: "http://127.0.0.1:9/hook"}]

                    """, file: "beacond.yaml")
            let clock: @Sendable () -> Timestamp = { APIAnswerTests.start + .seconds(5) }
            let store = try StateStore(directory: NSTemporaryDirectory() + "beacond-answers-\(UUID().uuidString)")
            let worker = WebhookWorker(
                settings: .init(
                    id: "crm", url: "http://127.0.0.1:9/hook", events: EventTypeGlob(["*"]), secret: nil,
                    schedule: DeliverySchedule(maxEvents: 10, maxDelay: .seconds(1), maxAge: .hours(1)),
                    timeout: .seconds(1)),
                store: store, clock: clock, logger: .silent)
            let publisher = EventPublisher(
                gateway: "gw", store: nil, workers: [worker], echo: false, clock: clock, logger: .silent)
            let engine = LiveEngine(
                engine: BeaconEngine(configuration: config.engineConfiguration, start: APIAnswerTests.start),
                clock: clock, publish: { publisher.publish($0) })
            var sightings: [Sighting] = []
            for second in 1...4 {
                for (receiver, rssi) in [("r1", -62), ("r2", -70), ("r3", -74)] {
                    sightings.append(APIAnswerTests.sighting(at: Double(second), receiver: receiver, rssi: rssi))
                }
            }
            engine.submit(.sightings(sightings))
            let context = APIContext(
                configuration: { config }, version: "test", started: APIAnswerTests.start, engine: engine, store: store,
                publisher: publisher, runtime: { RuntimeStatus() }, errors: RecentErrors(), clock: clock,
                ingest: { engine.submit(.sightings($0)) })
            router = APIRouter(context: context, stream: EventStreamHub(store: nil))
            self.engine = engine
            Thread { engine.run(maxIdleWait: .milliseconds(50)) }.start()
        }

        deinit { engine.stop() }

        /// The body of `GET path`, waiting for an answer given later (`HTTPReply.later`).
        func get(_ path: String) throws -> JSONValue {
            let response = try answer(path)
            #expect(response.status == 200, "\(path): \(String(decoding: response.body, as: UTF8.self))")
            return try JSONParser.parse(String(decoding: response.body, as: UTF8.self))
        }

        /// The whole answer to `GET path`, whatever its status.
        func answer(_ path: String) throws -> HTTPResponse {
            try answer("GET", path)
        }

        /// The request as a peer of `uid` would send it on the socket (a root peer by default).
        func request(_ method: String, _ path: String, body: String = "", uid: UInt32 = 0) throws -> HTTPRequest {
            let length = body.isEmpty ? "" : "Content-Length: \(body.utf8.count)\r\n"
            let head = "\(method) \(path) HTTP/1.1\r\nHost: x\r\n\(length)\r\n"
            guard case let .done(parsed, _) = try HTTPRequestParser.head(Array(head.utf8)[...]) else {
                throw RelayBackpressureTests.ParseFailure()
            }
            return HTTPRequest(head: parsed, body: Array(body.utf8), peer: PeerCredentials(pid: 1, uid: uid, gid: uid))
        }

        /// The whole answer to `method path` with `body` from a peer of `uid`, whatever its status.
        func answer(_ method: String, _ path: String, body: String = "", uid: UInt32 = 0) throws -> HTTPResponse {
            let reply = router.handle(try request(method, path, body: body, uid: uid))
            let response: HTTPResponse
            switch reply {
            case let .response(r): response = r
            case let .later(start):
                let box = Mutex<HTTPResponse?>(nil)
                let done = DispatchSemaphore(value: 0)
                start { r in
                    box.withLock { $0 = r }
                    done.signal()
                }
                _ = done.wait(timeout: .now() + 10)
                guard let r = box.withLock({ $0 }) else { throw RelayBackpressureTests.ParseFailure() }
                response = r
            default: throw RelayBackpressureTests.ParseFailure()
            }
            return response
        }
    }

    /// An iBeacon advertisement of cart-7 heard by `receiver`, `at` seconds after the start.
    static func sighting(at seconds: Double, receiver: String, rssi: Int) -> Sighting {
        let t = Double(start.nanoseconds) / 1e9 + seconds
        return try! SightingRecord.parse(
            line: #"{"t":\#(t),"receiver":"\#(receiver)","address":"C3:11:22:33:44:55","rssi":\#(rssi),"#
                + #""manufacturer_data":{"76":"0215e2c56db5dffb48d2b060d0f5a71096e0002a0007c5"}}"#)
    }

    @Test func beaconsReadBackWhole() throws {
        let f = try Fixture()
        let body = try f.get("/v1/beacons")
        let page = BeaconsPage(json: body)
        #expect(page.json == body)
        #expect(page.total == 1 && page.next == nil)
        let beacon = try #require(page.beacons.first)
        #expect(beacon.tag == .ibeacon(uuid: Self.uuid, major: 42, minor: 7))
        #expect(Set(beacon.receivers.map(\.receiver)) == ["r1", "r2", "r3"])
        #expect(beacon.receivers.allSatisfy { $0.rssi != nil && $0.lastSeen != nil })
    }

    @Test func assetsZonesAndTheFloorReadBackWhole() throws {
        let f = try Fixture()
        let assets = try f.get("/v1/assets")
        let list = AssetList(json: assets)
        #expect(list.json == assets)
        #expect(list.assets.map(\.id) == ["cart-7", "pallet-1"])
        #expect(list.assets[0].name == "Cart 7" && list.assets[0].lastSeen != nil)
        #expect(list.assets[1].tag == .eddystone(namespace: "00112233445566778899", instance: "aabbccddeeff"))
        let one = try f.get("/v1/assets/cart-7")
        #expect(AssetList.Asset(json: one).json == one)

        let zones = try f.get("/v1/zones")
        #expect(FloorReport.json(FloorReport.zones(json: zones)) == zones["zones"])
        #expect(
            FloorReport.zones(json: zones).map(\.shapeText) == ["polygon on level 0, 4 points", "within 2.5 m of r2"])

        let floor = try f.get("/v1/floor")
        let report = FloorReport(json: floor)
        #expect(report.json == floor)
        #expect(report.receivers.map(\.id) == ["r1", "r2", "r3"] && report.levels == [0])
        #expect(report.receivers.allSatisfy { $0.sightings == 4 && !$0.silent })

        let readings = try f.get("/v1/assets/cart-7/readings")
        let heard = AssetReadings(json: readings)
        #expect(heard.json == readings)
        #expect(heard.readings.first { $0.receiver == "r3" }?.z == 2.5)
    }

    /// `GET /v1/tags`: the heard cart with its pace, the silent pallet after it, nothing
    /// missing yet (missing_after is 10 min; the fixture's clock is 5 s in).
    @Test func tagsReadBackWholeWorstFirst() throws {
        let f = try Fixture()
        let body = try f.get("/v1/tags")
        let list = TagList(json: body)
        #expect(list.json == body)
        #expect(list.tags.map(\.asset) == ["cart-7", "pallet-1"])
        let cart = list.tags[0]
        #expect(cart.lastSeen != nil && cart.advertisingIntervalMilliseconds == 1000 && !cart.missing)
        #expect(cart.battery == nil && cart.moving == nil && !cart.batteryLow)
        #expect(list.tags[1].lastSeen == nil && !list.tags[1].missing)
        #expect(TagList(json: try f.get("/v1/tags?missing=true")).tags.isEmpty)
    }

    @Test func alarmsClientsRegionsAndTheOutboxReadBackWhole() throws {
        let f = try Fixture()
        let alarms = try f.get("/v1/alarms")
        let list = AlarmList(json: alarms)
        #expect(list.json == alarms)
        #expect(list.alarms.map(\.id) == ["dock-watch", "door-dwell"])
        #expect(list.alarms[0].assets == ["cart-7"] && list.alarms[1].assets == nil && list.alarms[1].dwell == "5m")

        let clients = try f.get("/v1/clients")
        #expect(ClientList(json: clients).json == clients)
        #expect(ClientList(json: clients).clients.map(\.id) == ["app"])

        let regions = try f.get("/v1/clients/app/regions")
        let answer = RegionList(json: regions)
        #expect(answer.json == regions)
        #expect(answer.regions.map(\.spec.id) == ["till"] && answer.regions[0].state == "inside")

        let outbox = try f.get("/v1/outbox")
        #expect(OutboxReport(json: outbox).json == outbox)
        #expect(OutboxReport(json: outbox).webhooks.map(\.id) == ["crm"])

        let reachability = ReachabilityReport(
            json: .object([
                ("checked_from", .object([("pid", .int(7)), ("systemd_unit", .string("beacond.service"))])),
                ("destinations", .array([])),
            ]))
        #expect(reachability.systemdUnit == "beacond.service" && reachability.pid == 7)
    }

    /// Answers the fixture does not make (a dead letter, a webhook test) read back whole too.
    @Test func deadLettersAndWebhookTestsReadBackWhole() {
        var letter = OutboxReport.DeadLetter()
        (letter.webhook, letter.id, letter.type, letter.reason) = ("crm", "e-1", "beacond.zone.enter", "HTTP 410")
        (letter.enqueued, letter.dead) = ("2026-11-28T08:00:00Z", nil)
        var report = OutboxReport()
        report.deadLetters = [letter]
        #expect(OutboxReport(json: report.json) == report)
        var test = WebhookTestReport()
        (test.webhook, test.url, test.status, test.tookMilliseconds, test.signed) = ("crm", "http://x/", 204, 12, true)
        #expect(WebhookTestReport(json: test.json) == test)
    }

    /// The error every refusal carries reads back as `APIErrorAnswer`.
    @Test func refusalsReadBackAsTheirCodeAndMessage() throws {
        let response = HTTPResponse.error(status: 404, code: "unknown_asset", message: "no asset \"x\"")
        let answer = APIErrorAnswer(json: try JSONParser.parse(String(decoding: response.body, as: UTF8.self)))
        #expect(answer?.code == "unknown_asset" && answer?.message == "no asset \"x\"")
    }
}
