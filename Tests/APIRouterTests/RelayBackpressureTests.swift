import API
import BeaconConfig
import BeaconCore
import BeaconRuntime
import HTTPServer
import Logs
import Publishing
import Testing

/// `POST /v1/sightings` against an engine that has fallen behind (its queue full, its thread
/// not running): the relay is told 503 with `Retry-After`, not "accepted", so it keeps the
/// sightings and sends them again.
@Suite struct RelayBackpressureTests {
    static let start = Timestamp.seconds(1_763_805_600)
    static let line =
        #"{"t":1763805600,"receiver":"relay-1","address":"C3:11:22:33:44:55","rssi":-60,"#
        + #""manufacturer_data":{"76":"0215e2c56db5dffb48d2b060d0f5a71096e0002a0007c5"}}"#

    static func post(_ router: APIRouter, _ body: String) throws -> HTTPResponse {
        let head = "POST /v1/sightings HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
        guard case let .done(parsed, _) = try HTTPRequestParser.head(Array(head.utf8)[...]) else {
            throw ParseFailure()
        }
        let request = HTTPRequest(head: parsed, body: Array(body.utf8), peer: PeerCredentials(pid: 1, uid: 0, gid: 0))
        guard case let .response(response) = router.handle(request) else { throw ParseFailure() }
        return response
    }

    struct ParseFailure: Error {}

    @Test func aFullEngineQueueIsA503WithRetryAfter() throws {
        let config = try ConfigLoader.load(yaml: "gateway: {id: gw}\n", file: "beacond.yaml")
        let publisher = EventPublisher(
            gateway: "gw", store: nil, workers: [], echo: false, clock: { Self.start }, logger: .silent)
        // Never run: nothing leaves the queue
        let engine = LiveEngine(
            engine: BeaconEngine(configuration: config.engineConfiguration, start: Self.start),
            clock: { Self.start }, publish: { publisher.publish($0) })
        let context = APIContext(
            configuration: { config }, version: "test", started: Self.start, engine: engine, store: nil,
            publisher: publisher, runtime: { RuntimeStatus() }, errors: RecentErrors(), clock: { Self.start },
            ingest: { engine.submit(.sightings($0)) })
        let router = APIRouter(context: context, stream: EventStreamHub(store: nil))

        let batch = Array(repeating: Self.line, count: 1_000).joined(separator: "\n")
        for _ in 0..<(LiveEngine.queuedSightingsLimit / 1_000) {
            #expect(try Self.post(router, batch).status == 202)
        }
        let refused = try Self.post(router, batch)
        #expect(refused.status == 503)
        #expect(refused.headers.contains { $0.name == "Retry-After" && $0.value == "1" })
        #expect(String(decoding: refused.body, as: UTF8.self).contains("\"engine_behind\""))
        #expect(engine.shedCount == 1_000)
    }
}
