import API
import BeaconConfig
import BeaconCore
import BeaconRuntime
import BlueZ
import HTTPServer
import Simulation

/// The inputs beacond takes from outside, each as one function of bytes that must return
/// for every input: a trap here is a daemon killed by a relay, a client or a config file.
enum FuzzTarget: String, CaseIterable {
    /// `POST /v1/sightings` bodies and replay traces: lines through the replay into an
    /// engine with regions, ranging, assets, zones and alarms.
    case sightings
    /// `beacond.yaml`: the loader, and when it accepts, an engine on twenty minutes of
    /// sightings and on the simulator's site.
    case config
    /// Request heads, chunked bodies and targets as the API's socket reads them.
    case http
    /// D-Bus messages as bluetoothd's signals arrive, read by beacond's own wire-format
    /// reader, through to a sighting and the engine.
    case dbus
    /// Whole requests, parsed as the socket parses them, to the API's router over a running
    /// engine, a real state store and the fuzz site: every endpoint, query and body.
    case api
    /// Sighting lines read both ways: `SightingLineReader` (from bytes) and the generic path
    /// (`SightingRecord.parse`) must accept with the same values or refuse with the same
    /// reason; a difference traps.
    case sightingReader = "sighting-reader"
    /// A message on a site's `sightings/<sender>` topic (SPEC §6.2): the first line is the
    /// sender (the topic's last level), the rest the payload, through `SiteIntake` into the
    /// fuzz site's engine. What is taken must be of known receivers, and every record line
    /// must be taken or counted.
    case siteBatch = "site-batch"
    /// A message of an ESPresense node (SPEC §9): the first line is the topic, the rest the
    /// payload, through `ForeignIntake` into the fuzz site's engine.
    case espresense
    /// A message of an OpenMQTTGateway or a Theengs Gateway, as `espresense`.
    case openMQTTGateway = "openmqttgateway"
    /// An ESPHome Bluetooth proxy's bytes, plaintext or encrypted, through `ProxySession` and
    /// the AD structures' reader into the fuzz site's engine (`FuzzESPHome.swift`).
    case esphome
    /// A time or a span as a client writes it (`since`, `from`, `to`, config durations): what
    /// `RFC3339.parse`, `TimeSpan(parsing:)` and the API's `since` accept lies in
    /// `RFC3339.supported`, and a time written back reads back the same.
    case times

    func run(_ bytes: UnsafeBufferPointer<UInt8>) {
        switch self {
        case .sightings: Self.replay(config: FuzzSite.config, lines: String(decoding: bytes, as: UTF8.self))
        case .config: Self.config(String(decoding: bytes, as: UTF8.self))
        case .http: Self.http(Array(bytes))
        case .api: Self.api(Array(bytes))
        case .dbus: Self.dbus(UnsafeRawBufferPointer(bytes))
        case .sightingReader: Self.differential(UnsafeRawBufferPointer(bytes))
        case .siteBatch: Self.siteBatch(UnsafeRawBufferPointer(bytes))
        case .espresense, .openMQTTGateway: Self.foreign(UnsafeRawBufferPointer(bytes))
        case .times: Self.times(String(decoding: bytes, as: UTF8.self))
        case .esphome: Self.esphome(UnsafeRawBufferPointer(bytes))
        }
    }

    static func times(_ text: String) {
        if let t = RFC3339.parse(text) {
            precondition(RFC3339.supported.contains(t), "\(text) parsed outside the supported years")
            let millis = Timestamp(nanoseconds: t.nanoseconds / 1_000_000 * 1_000_000)
            precondition(RFC3339.parse(RFC3339.format(t)) == millis, "\(text) does not read back as written")
        }
        if let span = TimeSpan(parsing: text) {
            precondition(span.nanoseconds >= 0, "\(text) parsed as a negative span")
            _ = span.description
        }
        let now = Timestamp.seconds(1_763_805_600)
        if let since = APIRouter.since(text, now: now) {
            precondition(RFC3339.supported.contains(since), "since=\(text) answered outside the supported years")
        }
    }

    /// The fuzz site's receivers rx1 (ESPresense's "kitchen") and rx2 (OpenMQTTGateway's
    /// "OMG_lobby"): what is taken is one of theirs, and every message on their topics is
    /// taken or dropped with a reason.
    static func foreign(_ bytes: UnsafeRawBufferPointer) {
        let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
        let topic = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<newline]), as: UTF8.self)
        let payload = UnsafeRawBufferPointer(rebasing: bytes[min(newline + 1, bytes.count)...])
        var settings = ForeignReceivers()
        settings.espresense = .init(prefix: "espresense", receivers: ["kitchen": "rx1"])
        settings.openMQTTGateway = .init(prefix: "home", receivers: ["OMG_lobby": "rx2"])
        var intake = ForeignIntake(settings: settings)
        var engine = FuzzSite.engine
        for at in [FuzzSite.start, FuzzSite.start + .seconds(1)] {
            guard let out = intake.take(topic: topic, payload: payload, at: at) else { return }
            precondition((out.sighting == nil) != (out.dropped == nil), "neither taken nor dropped, or both")
            if let s = out.sighting {
                precondition(["rx1", "rx2"].contains(s.receiver), "an unmapped receiver was taken")
                engine.prepare([s])
                _ = engine.ingest(s, notAfter: at)
            }
        }
    }

    static func siteBatch(_ bytes: UnsafeRawBufferPointer) {
        let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
        let sender = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<newline]), as: UTF8.self)
        let payload = UnsafeRawBufferPointer(rebasing: bytes[min(newline + 1, bytes.count)...])
        let receivers = Set(FuzzSite.config.receivers.map(\.id))
        var intake = SiteIntake(gateway: "gw1", knownGateways: ["gw1", "gw2"], knownReceivers: receivers)
        var engine = FuzzSite.engine
        for at in [FuzzSite.start, FuzzSite.start + .seconds(1)] {
            guard let out = intake.take(sender: sender, payload: payload, at: at) else { return }
            let lines = payload.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
            precondition(out.sightings.allSatisfy { receivers.contains($0.receiver) }, "an unknown receiver was taken")
            precondition(
                out.rejected != nil || out.sightings.count + out.dropped.values.reduce(0, +) <= lines,
                "more records than lines")
            precondition(zip(out.sightings, out.sightings.dropFirst()).allSatisfy { $0.time <= $1.time }, "not sorted")
            for s in out.sightings { _ = engine.ingest(s, notAfter: at) }
        }
    }

    static func differential(_ bytes: UnsafeRawBufferPointer) {
        var reader = SightingLineReader()
        var start = 0
        for end in bytes.indices where bytes[end] == UInt8(ascii: "\n") || end == bytes.count - 1 {
            let line = UnsafeRawBufferPointer(
                rebasing: bytes[start..<(bytes[end] == UInt8(ascii: "\n") ? end : end + 1)])
            start = end + 1
            let fast = Result { () throws(SightingRecordError) in try reader.read(line) }
            let generic = Result { () throws(SightingRecordError) in
                try SightingRecord.parse(line: String(decoding: line, as: UTF8.self))
            }
            switch (fast, generic) {
            case let (.success(a), .success(b)) where a == b: continue
            case let (.failure(a), .failure(b)) where a == b: continue
            default:
                fatalError("the reader and the generic path disagree on \(Array(line)): \(fast) vs \(generic)")
            }
        }
    }

    static func replay(config: Config, lines: String) {
        var replay = TraceReplay(config: config, idNonce: 1)
        var number = 0
        for line in lines.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            replay.feed(line: String(line), number: number, emit: { _ in }, report: { _ in })
        }
        replay.finish(emit: { _ in }, report: { _ in })
    }

    static func config(_ text: String) {
        guard let config = try? ConfigLoader.load(yaml: text, file: "fuzz.yaml", fileReadable: { _ in "secret" })
        else { return }
        replay(config: config, lines: FuzzSite.day)
        simulate(config)
        reload(to: config)
    }

    /// SIGHUP both ways, as `LiveDaemon.reload` applies it: the fuzz site's engine, heard for
    /// a while, reconfigured to the fuzzed file, heard on, and back. (Short: a position tick
    /// on the site's grid is the costly part, and the corpus runs in every test run.)
    static func reload(to config: Config) {
        let site = FuzzSite.config
        var engine = FuzzSite.engine
        var sightings = FuzzSite.daySightings[...]
        func hear(_ n: Int) {
            for s in sightings.prefix(n) { _ = engine.ingest(s) }
            sightings = sightings.dropFirst(n)
        }
        var running = site
        func sighup(to new: Config) {
            let reload = ConfigReload(from: running, to: new)
            _ = engine.apply(reload, from: running, at: engine.now)
            running = reload.running
        }
        // 35 s of the day each time: regions and zones entered, an exit timeout passed.
        hear(20)
        sighup(to: config)
        hear(20)
        sighup(to: site)
        hear(20)
    }

    /// The site as `beacond simulate` and `--simulate` run it: its own tags among its own
    /// receivers, into an engine, for 25 of the simulator's steps (fewer on a large site, so
    /// that one input stays well under the fuzzer's time limit), then an hour on.
    static func simulate(_ config: Config) {
        let start = FuzzSite.start
        var simulator = SiteSimulator(
            config: config, settings: config.simulation ?? SimulationSettings(), seed: 1, start: start)
        var engine = BeaconEngine(configuration: config.engineConfiguration, start: start)
        let perStep = max(1, config.assets.count * config.receivers.count)
        for _ in 0..<min(25, 10_000 / perStep) {
            for sighting in simulator.advance().sightings { _ = engine.ingest(sighting) }
        }
        _ = engine.advance(to: simulator.now + .hours(1))
    }

    /// The head, then a chunked body decoded whole and again fed in pieces as a socket
    /// would deliver it (each piece as long as the byte before it says): both must agree,
    /// and neither may hold more than the framing's bounds allow.
    static func http(_ bytes: [UInt8]) {
        guard case let .done(head, consumed)? = try? HTTPRequestParser.head(bytes[...]) else { return }
        precondition(consumed <= HTTPRequestParser.maxHeadBytes + 4, "a head over its limit was taken")
        _ = HTTPRequestParser.splitTarget(head.target)
        guard head.chunked else { return }
        let limit = 4096
        let rest = bytes[consumed...]
        let whole = try? HTTPRequestParser.chunkedBody(rest, limit: limit)
        var decoder = ChunkedDecoder(limit: limit)
        var buffer: [UInt8] = []
        var i = rest.startIndex
        do {
            while i < rest.endIndex && !decoder.isDone {
                let n = min(rest.endIndex - i, Int(rest[i] % 7) + 1)
                buffer += rest[i..<i + n]
                i += n
                buffer.removeFirst(try decoder.feed(buffer[...]))
                precondition(
                    buffer.count <= ChunkedDecoder.maxSizeLineBytes + HTTPRequestParser.maxHeadBytes + 8,
                    "the decoder left unbounded input waiting")
            }
        } catch {
            if case .done? = whole { preconditionFailure("pieces refused what the whole body decoded") }
            return
        }
        precondition(decoder.body.count <= limit)
        if case let .done(body, _)? = whole, decoder.isDone {
            precondition(body == decoder.body, "pieces and the whole body decoded differently")
        }
    }
}

extension FuzzTarget {
    static func dbus(_ message: UnsafeRawBufferPointer) {
        _ = DeviceSignal.messageLength(message)
        guard let signal = DeviceSignal.parse(message), let sighting = signal.sighting(at: FuzzSite.start) else {
            return
        }
        var engine = FuzzSite.engine
        _ = engine.ingest(sighting)
    }

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
