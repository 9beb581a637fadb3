// Site benchmark (issue 28): a stand-in for the other gateways of a site, publishing on a real
// broker as beacond's SiteLink does (`SightingBatch`, one batch per gateway every 250 ms).
//
//   beacond-site-bench load URL SITE GATEWAYS RATE SECONDS
//       GATEWAYS gateways gw1…gwN, two receivers each (gwN-a, gwN-b), RATE sightings/s in all
//       of 200 iBeacon tags; prints the bytes per sighting on the wire.
//   beacond-site-bench matcher FLOOD
//       the hand-over matcher (`HandOverMatcher`) under a flood of decisions of distinct keys,
//       as a standby's account forging them sends: FLOOD decisions past its 20,000 limit, then
//       the engine's side — an alert stored, looked up under the same lock — timed; prints
//       µs per decision past the limit and per alert stored during the flood.
//   beacond-site-bench walk URL SITE CROSSINGS
//       gateway "gwa" with receivers r1…r4 at the corners of a 10 × 10 m floor hears one tag
//       (D0:00:00:00:00:01) at 10 Hz, noise-free, walking along y = 5 between x = 1 and x = 9
//       at 1 m/s; the zone `left` is x < 5. Subscribes to `events/zone.*` and prints, per
//       alert, the time from the tag's true crossing of x = 5 to the alert's arrival, and
//       from the alert's `time` (the locator's decision) to its arrival.
import BeaconConfig
import BeaconCore
import Dispatch
import Glibc
import Logging
import MQTT
import POSIX
import Synchronization

func now() -> Timestamp { Timestamp(nanoseconds: SystemClock.realtime) }

func connect(_ url: String, id: String) -> MQTTClient {
    guard case let .success(broker) = MQTTBroker.parse(url) else { fatalError("bad url \(url)") }
    var logger = Logger(label: "bench")
    logger.logLevel = .error
    do {
        return try MQTTClient(settings: .init(host: broker.host, port: broker.port, clientID: id), logger: logger)
    } catch {
        fatalError("libmosquitto: \(error)")
    }
}

func waitConnected(_ client: MQTTClient) {
    for _ in 0..<500 where !client.state.connected { usleep(10_000) }
    guard client.state.connected else { fatalError("no broker: \(client.state.lastError ?? "?")") }
}

func hex(_ b: Int) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[(b >> 4) & 15], digits[b & 15]])
}

func fixed(_ v: Double, _ places: Int = 1) -> String {
    let scale = places == 0 ? 1.0 : 10.0
    let r = (v * scale).rounded() / scale
    return places == 0 ? String(Int(r)) : String(r)
}

/// `2026-11-26T04:20:00.123Z` as a timestamp.
func parseTime(_ s: String) -> Timestamp? {
    let u = Array(s.utf8)
    guard u.count >= 20 else { return nil }
    func n(_ a: Int, _ b: Int) -> Int32 { Int32(String(decoding: u[a..<b], as: UTF8.self)) ?? 0 }
    var tm = Glibc.tm()
    tm.tm_year = n(0, 4) - 1900
    tm.tm_mon = n(5, 7) - 1
    tm.tm_mday = n(8, 10)
    tm.tm_hour = n(11, 13)
    tm.tm_min = n(14, 16)
    tm.tm_sec = n(17, 19)
    let seconds = Int64(timegm(&tm))
    var millis: Int64 = 0
    if u[19] == UInt8(ascii: "."), u.count >= 24 { millis = Int64(n(20, 23)) }
    return Timestamp(nanoseconds: seconds * 1_000_000_000 + millis * 1_000_000)
}

func ibeacon(_ minor: Int) -> ManufacturerDatum {
    var payload: [UInt8] = [0x02, 0x15]
    payload += [0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0]
    payload += [0x00, 0x01, UInt8(minor >> 8), UInt8(minor & 0xFF), 0xC5]
    return ManufacturerDatum(company: 0x004C, payload: payload)
}

func load(url: String, site: String, gateways: Int, rate: Int, seconds: Double) {
    let client = connect(url, id: "bench-load")
    client.start()
    waitConnected(client)
    let perBatch = max(1, rate / gateways / 4)
    var seq = [Int64](repeating: 0, count: gateways)
    var sent = 0
    var bytes = 0
    let started = SystemClock.monotonic
    var tick = 0
    let frames = (0..<200).map(ibeacon)
    while Double(SystemClock.monotonic - started) / 1e9 < seconds {
        tick += 1
        let t = now()
        for g in 0..<gateways {
            seq[g] += 1
            var sightings: [Sighting] = []
            sightings.reserveCapacity(perBatch)
            for i in 0..<perBatch {
                let tag = (g * 7 + i) % 200
                sightings.append(
                    Sighting(
                        time: t - .milliseconds(Int64(i % 250)), receiver: "gw\(g + 1)-\(i % 2 == 0 ? "a" : "b")",
                        address: "D0:5E:00:00:00:" + hex(tag), rssi: -60 - i % 30,
                        manufacturerData: [frames[tag]]))
            }
            let payload = SightingBatch.encode(.init(gateway: "gw\(g + 1)", seq: seq[g], sent: t), sightings)
            let topic = "beacond/\(site)/sightings/gw\(g + 1)"
            if client.publish(.init(topic: topic, payload: payload, qos: 0, retain: false)) != nil {
                sent += sightings.count
                // MQTT's PUBLISH: 1 byte type, 1–4 bytes length, 2 + topic, the payload (+1 MQTT 5 properties).
                bytes += payload.count + topic.utf8.count + 2 + 4 + 1
            }
        }
        let next = started + Int64(tick) * 250_000_000
        let wait = next - SystemClock.monotonic
        if wait > 0 { usleep(UInt32(wait / 1000)) }
    }
    let elapsed = Double(SystemClock.monotonic - started) / 1e9
    print(
        "published \(sent) sightings in \(fixed(elapsed)) s (\(Int(Double(sent) / elapsed))/s) from \(gateways) gateways; "
            + "\(fixed(Double(bytes) / Double(max(sent, 1)))) bytes per sighting on the wire, "
            + "\(fixed(Double(bytes) / Double(max(sent, 1)))) kB/s per 1,000 adverts/s")
    client.stop()
}

func walk(url: String, site: String, crossings: Int) {
    let client = connect(url, id: "bench-walk")
    let arrivals = Mutex<[(type: String, time: Timestamp, arrived: Timestamp)]>([])
    let events = "beacond/\(site)/events/#"
    let hooks = MQTTClient.Hooks(
        onConnect: { c in c.subscribe(events, qos: 1) },
        onMessage: { topic, payload, _ in
            guard topic.contains("/events/zone."),
                let event = try? JSONParser.parse(String(decoding: payload, as: UTF8.self)),
                let time = event["time"]?.stringValue, let t = parseTime(time)
            else { return }
            arrivals.withLock { $0.append((String(topic.split(separator: "/").last!), t, now())) }
        })
    client.start(hooks: hooks)
    waitConnected(client)
    let receivers = [("r1", 0.0, 0.0), ("r2", 10.0, 0.0), ("r3", 10.0, 10.0), ("r4", 0.0, 10.0)]
    var pending: [Sighting] = []
    var seq: Int64 = 0
    var crossingsAt: [Timestamp] = []
    var x = 9.0, direction = -1.0
    let start = SystemClock.monotonic
    var step = 0
    var lastBatch = SystemClock.monotonic
    // Warm up 5 s at x = 9 (outside the zone), then walk.
    while crossingsAt.count < crossings {
        step += 1
        let t = now()
        let walking = Double(SystemClock.monotonic - start) / 1e9 > 5
        if walking {
            let before = x
            x += direction * 0.1
            if (before - 5) * (x - 5) <= 0, before != 5 {
                // The true crossing happened between the two steps: at t - (x - 5) / speed.
                let past = abs(x - 5) / 1.0
                crossingsAt.append(t - .milliseconds(Int64(past * 1000)))
            }
            if x <= 1 || x >= 9 { direction = -direction }
        }
        for (id, rx, ry) in receivers {
            let d = max(0.5, ((x - rx) * (x - rx) + (5 - ry) * (5 - ry) + 1.44).squareRoot())
            pending.append(
                Sighting(
                    time: t, receiver: id, address: "D0:00:00:00:00:01", rssi: Int((-59 - 20 * log10(d)).rounded())))
        }
        if SystemClock.monotonic - lastBatch >= 250_000_000 {
            seq += 1
            lastBatch = SystemClock.monotonic
            client.publish(
                .init(
                    topic: "beacond/\(site)/sightings/gwa",
                    payload: SightingBatch.encode(.init(gateway: "gwa", seq: seq, sent: now()), pending), qos: 0,
                    retain: false))
            pending = []
        }
        let next = start + Int64(step) * 100_000_000
        let wait = next - SystemClock.monotonic
        if wait > 0 { usleep(UInt32(wait / 1000)) }
    }
    sleep(3)
    let got = arrivals.withLock { $0 }
    var fromCrossing: [Double] = []
    var fromDecision: [Double] = []
    for a in got {
        guard let crossing = crossingsAt.last(where: { $0 <= a.arrived }) else { continue }
        fromCrossing.append((a.arrived - crossing).seconds * 1000)
        fromDecision.append((a.arrived - a.time).seconds * 1000)
    }
    func pick(_ v: [Double], _ q: Double) -> String {
        let s = v.sorted()
        return s.isEmpty ? "-" : fixed(s[min(s.count - 1, Int(q * Double(s.count)))], 0)
    }
    print(
        "\(crossingsAt.count) crossings, \(got.count) zone alerts; true crossing → subscriber p50 \(pick(fromCrossing, 0.5)) / "
            + "p99 \(pick(fromCrossing, 0.99)) / max \(pick(fromCrossing, 1)) ms; the locator's decision (event time) → "
            + "subscriber p50 \(pick(fromDecision, 0.5)) / p99 \(pick(fromDecision, 0.99)) ms")
    client.stop()
}

func matcher(flood: Int) {
    var m = HandOverMatcher()
    let start = Timestamp.seconds(1_763_805_600)
    func decision(_ i: Int) -> SiteDecision {
        let body = "{\"type\":\"beacond.zone.enter\",\"subject\":\"tag-\(i)\",\"data\":{\"zone\":\"dock\"}}"
        return SiteDecision(
            id: "F\(i)", key: HandOverKey(type: "beacond.zone.enter", subject: "tag-\(i)", zone: "dock"), time: start,
            enqueuedAt: start, body: body)
    }
    let made = (0..<(HandOverMatcher.limit + flood)).map(decision)
    // Within one second of one another: no trim runs between them, as in a burst.
    for i in 0..<HandOverMatcher.limit { _ = m.decided(made[i], at: start) }
    var engineSide: [Double] = []
    let began = SystemClock.monotonic
    for i in HandOverMatcher.limit..<made.count {
        _ = m.decided(made[i], at: start)
        if i % 100 == 0 {
            let t = SystemClock.monotonic
            let key = HandOverKey(type: "beacond.zone.exit", subject: "cart", zone: "dock")
            _ = m.madeHere(id: "O\(i)", key: key, time: start, wait: true, at: start)
            engineSide.append(Double(SystemClock.monotonic - t) / 1000)
        }
    }
    let perDecision = Double(SystemClock.monotonic - began) / 1000 / Double(flood)
    engineSide.sort()
    func twoPlaces(_ x: Double) -> Double { (x * 100).rounded() / 100 }
    let each = twoPlaces(perDecision)
    let p50 = twoPlaces(engineSide[engineSide.count / 2])
    let worst = twoPlaces(engineSide.last ?? 0)
    print(
        "matcher: \(flood) decisions past the limit, \(each) µs each; an alert stored meanwhile p50 \(p50) µs, "
            + "max \(worst) µs; held \(m.held)")
}

let args = CommandLine.arguments
switch args.count > 1 ? args[1] : "" {
case "load" where args.count == 7:
    load(url: args[2], site: args[3], gateways: Int(args[4])!, rate: Int(args[5])!, seconds: Double(args[6])!)
case "matcher" where args.count == 3:
    matcher(flood: Int(args[2])!)
case "walk" where args.count == 5:
    walk(url: args[2], site: args[3], crossings: Int(args[4])!)
default:
    print("usage: beacond-site-bench load URL SITE GATEWAYS RATE SECONDS | walk URL SITE CROSSINGS | matcher FLOOD")
    exit(64)
}
