@testable import BeaconCore

/// Shared test vocabulary: a store uuid, beacons, and an engine driven by explicit times.
enum Fixture {
    /// Four receivers at the corners of a 20 × 10 m simulated floor, as configuration text.
    static let cornerReceivers = """
        receivers:
          - {id: sw, position: {x: 2, y: 2}}
          - {id: se, position: {x: 18, y: 2}}
          - {id: nw, position: {x: 2, y: 8}}
          - {id: ne, position: {x: 18, y: 8}}
        """

    static let storeUUID = BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let otherUUID = BeaconUUID("F7826DA6-4FA2-4E98-8024-BC5B71E0893E")!
    static let t0 = Timestamp.seconds(1_763_805_600)

    static func at(_ seconds: Double) -> Timestamp {
        t0 + TimeSpan(nanoseconds: Int64((seconds * 1e9).rounded()))
    }

    /// An iBeacon manufacturer payload (after the company id), as BlueZ gives it.
    static func iBeaconPayload(uuid: BeaconUUID = storeUUID, major: UInt16, minor: UInt16, power: Int8 = -59) -> [UInt8]
    {
        var p: [UInt8] = [0x02, 0x15]
        for shift in stride(from: 56, through: 0, by: -8) {
            p.append(UInt8(truncatingIfNeeded: uuid.high >> UInt64(shift)))
        }
        for shift in stride(from: 56, through: 0, by: -8) {
            p.append(UInt8(truncatingIfNeeded: uuid.low >> UInt64(shift)))
        }
        p += [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF), UInt8(bitPattern: power)]
        return p
    }

    static func sighting(
        _ seconds: Double, major: UInt16 = 42, minor: UInt16 = 7, rssi: Int = -60, uuid: BeaconUUID = storeUUID,
        receiver: String = "hci0", power: Int8 = -59
    ) -> Sighting {
        Sighting(
            time: at(seconds), receiver: receiver, address: "C3:11:22:33:44:55", rssi: rssi,
            manufacturerData: [
                ManufacturerDatum(
                    company: 0x004C, payload: iBeaconPayload(uuid: uuid, major: major, minor: minor, power: power))
            ])
    }

    static func region(
        _ id: String, uuid: BeaconUUID = storeUUID, major: UInt16? = nil, minor: UInt16? = nil,
        notifyOnEntry: Bool = true, notifyOnExit: Bool = true, dwell: [TimeSpan] = [], ranging: Bool = false
    ) -> RegionSpec {
        RegionSpec(
            id: id, uuid: uuid, major: major, minor: minor, notifyOnEntry: notifyOnEntry, notifyOnExit: notifyOnExit,
            dwell: dwell, ranging: ranging)
    }

    static func engine(
        _ regions: [RegionSpec], client: String = "app", settings: MonitoringSettings = MonitoringSettings(),
        receivers: [String: ReceiverCalibration] = [:], start: Double = 0
    ) -> BeaconEngine {
        BeaconEngine(
            configuration: EngineConfiguration(
                monitoring: settings, clients: [ClientSpec(id: client, regions: regions)], receivers: receivers),
            start: at(start))
    }

    static let beacon = IBeaconID(uuid: storeUUID, major: 42, minor: 7)
}

/// Drives an engine through a script of sightings and clock moves, collecting every event.
struct Script {
    var engine: BeaconEngine
    var events: [Event] = []

    init(_ engine: BeaconEngine) { self.engine = engine }

    mutating func see(_ s: Sighting) { events += engine.ingest(s) }

    /// Sightings every `every` seconds from `from` up to and including `to`.
    mutating func see(
        from: Double, to: Double, every: Double = 1, rssi: Int = -60, major: UInt16 = 42, minor: UInt16 = 7,
        uuid: BeaconUUID = Fixture.storeUUID, receiver: String = "hci0"
    ) {
        var t = from
        while t <= to + 1e-9 {
            see(Fixture.sighting(t, major: major, minor: minor, rssi: rssi, uuid: uuid, receiver: receiver))
            t += every
        }
    }

    mutating func advance(to seconds: Double) { events += engine.advance(to: Fixture.at(seconds)) }

    /// A region "store" entered at 41 s whose beacon is heard every second up to 50 s, with
    /// one dwell alert.
    static func insideAndHeard(dwell: TimeSpan) -> Script {
        var s = Script(Fixture.engine([Fixture.region("store", dwell: [dwell])]))
        s.advance(to: 30)
        s.see(from: 40, to: 50)
        _ = s.take()
        return s
    }

    /// The events gathered since the last call, and forget them.
    mutating func take() -> [Event] {
        defer { events = [] }
        return events
    }

    /// Only the region events (no ranging/proximity), as (seconds from t0, payload).
    mutating func takeRegionEvents() -> [Event] {
        take().filter {
            switch $0.payload {
            case .ranging, .beaconProximity: return false
            default: return true
            }
        }
    }
}

func state(_ region: String, _ s: RegionState, at seconds: Double, client: String = "app") -> Event {
    Event(time: Fixture.at(seconds), payload: .regionState(client: client, region: region, state: s))
}

func exit(_ region: String, at seconds: Double, lastSeen: Double, enteredAt: Double, client: String = "app") -> Event {
    Event(
        time: Fixture.at(seconds),
        payload: .regionExit(
            client: client, region: region, lastSeen: Fixture.at(lastSeen),
            duration: Fixture.at(lastSeen) - Fixture.at(enteredAt)))
}

func dwell(_ region: String, _ span: TimeSpan, at seconds: Double, client: String = "app") -> Event {
    Event(time: Fixture.at(seconds), payload: .regionDwell(client: client, region: region, dwell: span))
}

extension Event {
    var isEnter: Bool {
        if case .regionEnter = payload { return true }
        return false
    }
    var kind: String { payload.kind }
}

/// "12.5 region.enter app/store": a compact, exact rendering of an event for assertions.
func line(_ e: Event) -> String {
    let seconds = Double((e.time - Fixture.t0).nanoseconds) / 1e9
    let t = seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    switch e.payload {
    case let .regionState(c, r, s): return "\(t) region.state \(c)/\(r) \(s.rawValue)"
    case let .regionEnter(c, r, b, _, rssi, _): return "\(t) region.enter \(c)/\(r) \(b.major)/\(b.minor) \(rssi)"
    case let .regionExit(c, r, last, d):
        let l = Double((last - Fixture.t0).nanoseconds) / 1e9
        return "\(t) region.exit \(c)/\(r) last_seen=\(l == l.rounded() ? String(Int(l)) : String(l)) duration=\(d)"
    case let .regionDwell(c, r, d): return "\(t) region.dwell \(c)/\(r) \(d)"
    case let .regionFailed(c, r, reason): return "\(t) region.failed \(c)/\(r) \(reason.rawValue)"
    case let .ranging(c, r, beacons):
        return "\(t) ranging \(c)/\(r) "
            + beacons.map { "\($0.beacon.major)/\($0.beacon.minor):\($0.proximity.rawValue)" }.joined(separator: ",")
    case let .beaconProximity(b, p, _): return "\(t) beacon.proximity \(b) \(p.rawValue)"
    case let .assetPosition(f): return "\(t) asset.position \(f.asset) \(f.position.x),\(f.position.y)"
    case let .zone(a): return "\(t) zone.\(a.condition.rawValue) \(a.alarm) \(a.asset) \(a.zone)"
    case let .tag(a): return "\(t) asset.\(a.condition.rawValue) \(a.asset)"
    case let .zoneVisit(v):
        let seconds = { (x: Timestamp) in Int(Double((x - Fixture.t0).nanoseconds) / 1e9) }
        return "\(t) zone.visit \(v.asset) \(v.zone) \(seconds(v.entered))-\(seconds(v.left))"
    case let .adapterState(a, present, powered, discovering):
        return "\(t) adapter.state \(a) present=\(present) powered=\(powered) discovering=\(discovering)"
    }
}

extension Script {
    mutating func lines() -> [String] { takeRegionEvents().map(line) }
    mutating func allLines() -> [String] { take().map(line) }
}
