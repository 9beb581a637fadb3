import API
import BeaconConfig
import BeaconCore
import BeaconRuntime
import HTTPServer
import Publishing
import Simulation
import Storage

#if canImport(Glibc)
    import Glibc
#endif

/// The inputs beacond takes from outside, each as one function of bytes that must return
/// for every input: a trap here is a daemon killed by a relay, a client or a config file.
enum FuzzTarget: String, CaseIterable {
    /// `POST /v1/sightings` bodies and replay traces: lines through the replay into an
    /// engine with regions, ranging, assets, zones and alarms.
    case sightings
    /// `beacond.yaml`: the loader, and when it accepts, an engine on an hour of sightings
    /// and on the simulator's site.
    case config
    /// Request heads, chunked bodies and targets as the API's socket reads them.
    case http
    /// Whole requests, parsed as the socket parses them, to the API's router over a running
    /// engine, a real state store and the fuzz site: every endpoint, query and body.
    case api

    func run(_ bytes: UnsafeBufferPointer<UInt8>) {
        switch self {
        case .sightings: Self.replay(config: FuzzSite.config, lines: String(decoding: bytes, as: UTF8.self))
        case .config: Self.config(String(decoding: bytes, as: UTF8.self))
        case .http: Self.http(Array(bytes))
        case .api: Self.api(Array(bytes))
        }
    }

    static func replay(config: Config, lines: String) {
        var replay = TraceReplay(config: config, idNonce: 1)
        var number = 0
        for line in lines.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            replay.feed(line: String(line), number: number, emit: { _ in }, report: { _ in })
        }
    }

    static func config(_ text: String) {
        guard let config = try? ConfigLoader.load(yaml: text, file: "fuzz.yaml", fileReadable: { _ in "secret" })
        else { return }
        replay(config: config, lines: FuzzSite.day)
        simulate(config)
    }

    /// The site as `beacond simulate` and `--simulate` run it: its own tags among its own
    /// receivers, into an engine, for 25 of the simulator's steps (fewer on a large site, so
    /// that one input stays well under the fuzzer's time limit), then an hour on.
    static func simulate(_ config: Config) {
        let start = Timestamp.seconds(1_763_805_600)
        var simulator = SiteSimulator(
            config: config, settings: config.simulation ?? SimulationSettings(), seed: 1, start: start)
        var engine = BeaconEngine(configuration: config.engineConfiguration, start: start)
        let perStep = max(1, config.assets.count * config.receivers.count)
        for _ in 0..<min(25, 10_000 / perStep) {
            for sighting in simulator.advance().sightings { _ = engine.ingest(sighting) }
        }
        _ = engine.advance(to: simulator.now + .hours(1))
    }

    static func http(_ bytes: [UInt8]) {
        guard case let .done(head, consumed)? = try? HTTPRequestParser.head(bytes[...]) else { return }
        _ = HTTPRequestParser.splitTarget(head.target)
        if head.chunked { _ = try? HTTPRequestParser.chunkedBody(bytes[consumed...], limit: 1 << 20) }
    }
}

extension FuzzTarget {
    static func api(_ bytes: [UInt8]) {
        guard case let .done(head, consumed)? = try? HTTPRequestParser.head(bytes[...]) else { return }
        let rest = bytes[consumed...]
        var body = Array(rest.prefix(head.contentLength ?? 0))
        if head.chunked {
            guard case let .done(decoded, _)? = try? HTTPRequestParser.chunkedBody(rest, limit: 1 << 20) else { return }
            body = decoded
        }
        // Root, so that the writing endpoints are reached too.
        let peer = PeerCredentials(pid: 1, uid: 0, gid: 0)
        _ = FuzzAPI.router.handle(HTTPRequest(head: head, body: body, peer: peer))
    }
}

/// The API as the daemon assembles it, once per fuzzing process: the fuzz site's engine on
/// its own thread, a state store in a new temporary directory, no webhooks.
enum FuzzAPI {
    /// Where the state store lives; removed when the process exits.
    static let directory: String = {
        var template = Array("/tmp/beacond-fuzz-XXXXXX".utf8CString)
        guard let dir = mkdtemp(&template) else { fatalError("mkdtemp failed") }
        atexit {
            for name in ["beacond.sqlite", "beacond.sqlite-wal", "beacond.sqlite-shm"] {
                unlink(FuzzAPI.directory + "/" + name)
            }
            rmdir(FuzzAPI.directory)
        }
        return String(cString: dir)
    }()

    static let router: APIRouter = {
        let store = try? StateStore(directory: directory)
        let config = FuzzSite.config
        let publisher = EventPublisher(
            gateway: config.gateway.id, store: store, workers: [], echo: false, clock: now, log: { _ in })
        let engine = LiveEngine(
            engine: BeaconEngine(configuration: config.engineConfiguration, start: now()), clock: now,
            publish: publisher.publish)
        detachThread { engine.run() }
        let context = APIContext(
            configuration: { config }, version: "fuzz", started: now(), engine: engine, store: store,
            publisher: publisher, runtime: { RuntimeStatus() }, errors: RecentErrors(), clock: now,
            ingest: { engine.submit(.sightings($0)) })
        return APIRouter(context: context, stream: EventStreamHub(store: store))
    }()

    @Sendable static func now() -> Timestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(nanoseconds: Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec))
    }
}

/// A site with something for every kind of sighting to reach: regions of each beacon
/// format with dwell and ranging, positioned receivers, assets by address and by iBeacon,
/// a polygon zone, a receiver zone and alarms on both.
enum FuzzSite {
    static let yaml = """
        gateway: {id: fuzz}
        monitoring: {exit_timeout: 10s, enter_sightings: 2, enter_window: 5s, ranging_interval: 1s}
        clients:
          - id: app
            regions:
              - {id: store, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, dwell: [5s], ranging: true}
              - {id: till, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 1, minor: 2}
        receivers:
          - {id: hci0, position: {x: 0, y: 0, z: 2.5}, rssi_at_1m: -59}
          - {id: rx1, position: {x: 10, y: 0}, path_loss_exponent: 2.5}
          - {id: rx2, position: {x: 10, y: 8, level: 1}}
          - {id: rx3, position: {x: 0, y: 8}}
        assets:
          - {id: cart, beacon: {address: "C3:11:22:33:44:55"}}
          - {id: badge, beacon: {uuid: F7826DA6-4FA2-4E98-8024-BC5B71E0893E, major: 7}}
        zones:
          - {id: aisle, polygon: [[1, 1], [6, 1], [6, 3], [3, 3], [3, 6], [1, 6]]}
          - {id: door, receiver: rx1, within: 2}
        alarms:
          - {id: traffic, zones: [aisle, door], on: [enter, exit, dwell], dwell: 3s}
        positioning: {publish_interval: 1s, tag_height: 1.2, floor: [[0, 0], [10, 0], [10, 8], [0, 8]]}
        """

    static let config: Config = {
        do {
            return try ConfigLoader.load(yaml: yaml, file: "fuzz-site.yaml")
        } catch {
            fatalError("the fuzz site does not load: \(error)")
        }
    }()

    /// Twenty minutes of the site's beacons heard by every receiver, for configurations the
    /// fuzzer makes up: past exit_timeout, dwell and ranging intervals as they are written.
    static let day: String = {
        let ibeacon = "0215e2c56db5dffb48d2b060d0f5a71096e000010002c5"
        let badge = "0215f7826da64fa24e988024bc5b71e0893e00070001c5"
        var lines: [String] = []
        for second in stride(from: 0, to: 1200, by: 7) {
            let t = 1_763_805_600 + Double(second)
            for (i, receiver) in ["hci0", "rx1", "rx2", "rx3"].enumerated() {
                let rssi = -50 - (second / 7 + i * 13) % 45
                lines.append(
                    #"{"t":\#(t + Double(i) / 10),"receiver":"\#(receiver)","address":"C3:11:22:33:44:55","rssi":\#(rssi),"manufacturer_data":{"76":"\#(second % 400 < 200 ? ibeacon : badge)"}}"#
                )
            }
        }
        return lines.joined(separator: "\n")
    }()
}
