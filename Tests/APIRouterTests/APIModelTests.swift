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
import Testing

/// Issue 26: the API's shapes are defined once. What the daemon writes for `/v1/status`
/// reads back through the same type beaconctl uses, field for field; every metric `/metrics`
/// exposes is a `Metric`, and docs/api.md's table says what the daemon's `# HELP` says.
@Suite struct APIModelTests {
    static let start = Timestamp.seconds(1_763_805_600)

    static func router() throws -> APIRouter {
        let config = try ConfigLoader.load(
            yaml: """
                gateway: {id: gw}
                webhooks: [{id: crm, url: "http://127.0.0.1:9/hook"}]

                """, file: "beacond.yaml")
        let worker = WebhookWorker(
            settings: .init(
                id: "crm", url: "http://127.0.0.1:9/hook", events: EventTypeGlob(["*"]), secret: nil,
                schedule: DeliverySchedule(maxEvents: 10, maxDelay: .seconds(1), maxAge: .hours(1)),
                timeout: .seconds(1)),
            store: try StateStore(directory: NSTemporaryDirectory() + "beacond-apimodel-\(UUID().uuidString)"),
            clock: { Self.start }, logger: .silent)
        let publisher = EventPublisher(
            gateway: "gw", store: nil, workers: [worker], echo: false, clock: { Self.start }, logger: .silent)
        let engine = LiveEngine(
            engine: BeaconEngine(configuration: config.engineConfiguration, start: Self.start),
            clock: { Self.start }, publish: { publisher.publish($0) })
        var runtime = RuntimeStatus()
        runtime.adapters = [AdapterState(adapter: "hci0", present: true, powered: true, discovering: false)]
        runtime.configFile = "/etc/beacond/beacond.yaml"
        runtime.stateReserve = (file: "/var/lib/beacond/beacond.reserve", bytes: 4096, alerts: 2)
        let errors = RecentErrors()
        errors.record(#"level=warning event=radios.blind next="no region exits""#)
        let context = APIContext(
            configuration: { config }, version: "test", started: Self.start, engine: engine, store: nil,
            publisher: publisher, runtime: { [runtime] in runtime }, errors: errors,
            clock: { Self.start + .seconds(90) },
            ingest: { engine.submit(.sightings($0)) })
        return APIRouter(context: context, stream: EventStreamHub(store: nil))
    }

    static func get(_ router: APIRouter, _ path: String) throws -> String {
        let head = "GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n"
        guard case let .done(parsed, _) = try HTTPRequestParser.head(Array(head.utf8)[...]),
            case let .response(response) = router.handle(
                HTTPRequest(head: parsed, body: [], peer: PeerCredentials(pid: 1, uid: 0, gid: 0)))
        else { throw RelayBackpressureTests.ParseFailure() }
        return String(decoding: response.body, as: UTF8.self)
    }

    @Test func theStatusTheDaemonWritesReadsBackWholeThroughBeaconctlsType() throws {
        let body = try JSONParser.parse(try Self.get(try Self.router(), "/v1/status"))
        let report = StatusReport(json: body)
        #expect(report.json == body, "every key written is read back, and nothing else")
        #expect(report.gateway == "gw" && report.uptimeSeconds == 90)
        #expect(report.adapters == [AdapterState(adapter: "hci0", present: true, powered: true, discovering: false)])
        #expect(
            report.stateReserve
                == StatusReport.Reserve(file: "/var/lib/beacond/beacond.reserve", bytes: 4096, alertsKept: 2))
        #expect(report.webhooks.map(\.id) == ["crm"] && report.webhooks[0].state == .ok)
        #expect(report.lastErrors.count == 1 && report.configFile == "/etc/beacond/beacond.yaml")
    }

    @Test func everyMetricExposedIsDefinedOnceAndDocumented() throws {
        let text = try Self.get(try Self.router(), "/metrics")
        let typed = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] }
        #expect(!typed.isEmpty)
        for name in typed { #expect(Metric(rawValue: String(name)) != nil, "\(name) is not a Metric") }
        let docs = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
                "../../docs/api.md"), encoding: .utf8)
        for metric in Metric.allCases {
            #expect(
                docs.contains("| `\(metric.rawValue)` | \(metric.type) |") && docs.contains("| \(metric.help) |"),
                "\(metric.rawValue) in docs/api.md's table")
        }
    }
}
