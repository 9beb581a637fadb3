import Testing

@testable import BeaconCore

/// Events are written straight to text (`JSONTextWriter`), not through a `JSONValue` tree.
/// Each kind's text must be the bytes its documented shape (SPEC §3), built here as a tree and
/// serialized, gives: the same members in the same order, the same numbers, the same escapes.
@Suite struct CloudEventTextTests {
    static let hostile = "a\"b\\c\nd\u{1}é"
    static let eddystone = BeaconIdentity.eddystone(
        EddystoneID(namespace: Array(0..<10), instance: [0xAB, 0xCD, 0xEF, 1, 2, 3]))

    static let payloads: [EventPayload] = [
        .regionState(client: hostile, region: "r", state: .inside),
        .regionEnter(client: "c", region: hostile, beacon: Fixture.beacon, receiver: "hci0", rssi: -67, distance: nil),
        .regionEnter(client: "c", region: "r", beacon: Fixture.beacon, receiver: "hci0", rssi: -67, distance: 2.23872),
        .regionExit(client: "c", region: "r", lastSeen: Fixture.at(1.5), duration: .milliseconds(90_250)),
        .regionDwell(client: "c", region: "r", dwell: .milliseconds(1_500)),
        .regionFailed(client: "c", region: "r", reason: .regionNotFound),
        .ranging(client: "c", region: "r", beacons: []),
        .ranging(
            client: "c", region: "r",
            beacons: [
                RangedBeacon(
                    beacon: Fixture.beacon, rssi: -71.25, distance: 3.14159, proximity: .far, receiver: "hci1"),
                RangedBeacon(beacon: Fixture.beacon, rssi: -80, distance: nil, proximity: .unknown, receiver: hostile),
            ]),
        .beaconProximity(beacon: .ibeacon(Fixture.beacon), proximity: .near, distance: 1.005),
        .beaconProximity(beacon: eddystone, proximity: .unknown, distance: nil),
        .adapterState(adapter: "hci0", present: true, powered: false, discovering: true),
        .assetPosition(
            AssetFix(
                asset: "cart-7", position: Point(x: 3.14159, y: -0.005), level: -1, accuracy: 1.239, zones: [],
                receivers: ["gw1-hci0", hostile])),
        .assetPosition(
            AssetFix(
                asset: "cart-7", position: Point(x: 0, y: 1e9), level: 2, accuracy: .infinity, zones: ["a", "b"],
                receivers: [])),
        .assetPosition(parked),
        .zone(
            ZoneAlert(
                alarm: "door", asset: "cart-7", zone: "exit", condition: .enter, position: Point(x: 1.234, y: 5),
                level: nil)),
        .zone(
            ZoneAlert(
                alarm: "door", asset: "cart-7", zone: "exit", condition: .dwell, position: nil, level: nil,
                dwell: .milliseconds(300_001))),
        .zone(
            ZoneAlert(
                alarm: "door", asset: "cart-7", zone: "exit", condition: .exit, position: Point(x: 0, y: 0), level: 3)),
        .tag(CloudEventTextTests.batteryLow), .tag(CloudEventTextTests.missing), .tag(CloudEventTextTests.found),
        .tag(TagAlert(asset: hostile, condition: .missing)),
        .zoneVisit(ZoneVisit(asset: hostile, zone: "dock", entered: Fixture.at(1.5), left: Fixture.at(90.25))),
    ]

    static let batteryLow: TagAlert = {
        var a = TagAlert(asset: "pallet-9", condition: .batteryLow)
        (a.batteryMillivolts, a.batteryAt, a.temperatureC) = (2410, .seconds(1_763_805_600), 21.456)
        return a
    }()
    /// A tag that stands on a `motion: parked` site.
    static let parked: AssetFix = {
        var f = AssetFix(
            asset: "pallet-9", position: Point(x: 8, y: 3), level: 0, accuracy: 0.4, zones: [], receivers: [])
        f.moving = false
        return f
    }()
    static let missing: TagAlert = {
        var a = TagAlert(asset: "pallet-9", condition: .missing)
        a.lastSeen = .seconds(1_763_805_600)
        a.position = AssetFix(
            asset: "pallet-9", position: Point(x: 2.345, y: 5), level: 1, accuracy: 1, zones: ["dock"], receivers: [])
        a.positionAt = .seconds(1_763_805_599)
        return a
    }()
    static let found: TagAlert = {
        var a = TagAlert(asset: "pallet-9", condition: .found)
        a.missingFor = .milliseconds(3_600_123)
        return a
    }()

    @Test(arguments: payloads)
    func eachKindIsWrittenAsItsDocumentedTree(payload: EventPayload) {
        let event = Event(time: Fixture.at(12.3456), payload: payload)
        let text = CloudEvent.text(event, id: "01KANG389M8F87P5G000000001", gatewayID: "gw-1")
        let tree: JSONValue = .object([
            ("specversion", "1.0"), ("id", "01KANG389M8F87P5G000000001"), ("source", "beacond://gw-1"),
            ("type", .string("beacond.\(payload.kind)")), ("time", "2025-11-22T10:00:12.345Z"),
            ("subject", .string(CloudEvent.subject(payload))), ("datacontenttype", "application/json"),
            ("dataschema", .string("urn:beacond:schema:\(payload.kind):1")), ("data", Self.documented(payload)),
        ])
        #expect(text == tree.serialized)
        // Valid JSON that reads back to the same text.
        #expect((try? JSONParser.parse(text))?.serialized == text)
    }

    @Test func aTestDeliveryWrapsItsOwnData() {
        let text = CloudEvent.text(
            id: "test-1", gatewayID: "gw", kind: "webhook.test", time: Fixture.at(0), subject: "crm",
            data: .object([("webhook", "crm"), ("note", .string(Self.hostile))]))
        #expect(
            text
                == #"{"specversion":"1.0","id":"test-1","source":"beacond://gw","type":"beacond.webhook.test","time":"2025-11-22T10:00:00.000Z","subject":"crm","datacontenttype":"application/json","dataschema":"urn:beacond:schema:webhook.test:1","data":{"webhook":"crm","note":"a\"b\\c\nd\u0001é"}}"#
        )
    }

    /// Numbers as events have always printed them: integers bare, at most six decimals with
    /// trailing zeros dropped, no `-0`, non-finite as null, huge ones in Swift's own form.
    @Test(arguments: [
        (-67.0, "-67"), (0.1, "0.1"), (-0.5, "-0.5"), (1.000001, "1.000001"), (2.2387, "2.2387"),
        (-0.0000004, "0"), (123.4560001, "123.456"), (Double.nan, "null"), (-Double.infinity, "null"),
        (9.99e14, "999000000000000"), (2e15, "2000000000000000.0"), (1e15 + 0.5, "1000000000000000.5"),
        (1e300, "1e+300"),
        (-9_223_372_036_854.775, "-9223372036854.775"),
    ])
    func numbers(value: Double, text: String) {
        #expect(JSONValue.number(value).serialized == text)
    }

    @Test func stringsEscapeQuotesBackslashesAndControlsOnly() {
        #expect(
            JSONValue.string(Self.hostile + "\t\r\u{1F}\u{7F}☃").serialized
                == #""a\"b\\c\nd\u0001é\t\r\u001f"# + "\u{7F}☃\"")
    }

    /// The `data` of each kind as SPEC §3 documents it, as a tree.
    static func documented(_ payload: EventPayload) -> JSONValue {
        func n(_ v: Double?) -> JSONValue { v.map { .number($0) } ?? .null }
        func r(_ v: Double, _ places: Double) -> Double { (v * places).rounded() / places }
        func beacon(_ id: IBeaconID) -> JSONValue {
            .object([
                ("uuid", .string(id.uuid.description)), ("major", n(Double(id.major))), ("minor", n(Double(id.minor))),
            ])
        }
        switch payload {
        case let .regionState(c, rg, state):
            return .object([("client", .string(c)), ("region", .string(rg)), ("state", .string(state.rawValue))])
        case let .regionEnter(c, rg, b, receiver, rssi, distance):
            return .object([
                ("client", .string(c)), ("region", .string(rg)), ("beacon", beacon(b)), ("receiver", .string(receiver)),
                ("rssi", n(Double(rssi))), ("distance", n(distance.map { r($0, 100) })),
            ])
        case let .regionExit(c, rg, lastSeen, duration):
            return .object([
                ("client", .string(c)), ("region", .string(rg)), ("last_seen", .string(RFC3339.format(lastSeen))),
                ("duration_s", n(r(duration.seconds, 1000))),
            ])
        case let .regionDwell(c, rg, dwell):
            return .object([("client", .string(c)), ("region", .string(rg)), ("dwell_s", n(dwell.seconds))])
        case let .regionFailed(c, rg, reason):
            return .object([("client", .string(c)), ("region", .string(rg)), ("reason", .string(reason.rawValue))])
        case let .ranging(c, rg, beacons):
            let items: [JSONValue] = beacons.map { b in
                .object([
                    ("uuid", .string(b.beacon.uuid.description)), ("major", n(Double(b.beacon.major))),
                    ("minor", n(Double(b.beacon.minor))), ("rssi", n(r(b.rssi, 10))),
                    ("distance", n(b.distance.map { r($0, 100) })), ("proximity", .string(b.proximity.rawValue)),
                    ("receiver", .string(b.receiver)),
                ])
            }
            return .object([("client", .string(c)), ("region", .string(rg)), ("beacons", .array(items))])
        case let .beaconProximity(identity, proximity, distance):
            return .object([
                ("beacon", CloudEvent.json(identity)), ("proximity", .string(proximity.rawValue)),
                ("distance", n(distance.map { r($0, 100) })),
            ])
        case let .adapterState(adapter, present, powered, discovering):
            return .object([
                ("adapter", .string(adapter)), ("present", .bool(present)), ("powered", .bool(powered)),
                ("discovering", .bool(discovering)),
            ])
        case let .assetPosition(fix):
            return .object([
                ("asset", .string(fix.asset)), ("x", n(r(fix.position.x, 100))), ("y", n(r(fix.position.y, 100))),
                ("level", n(Double(fix.level))), ("accuracy_m", n(r(fix.accuracy, 100))),
                ("zones", .array(fix.zones.map { .string($0) })),
                ("receivers_used", .array(fix.receivers.map { .string($0) })),
                ("moving", fix.moving.map { .bool($0) } ?? .null),
            ])
        case let .zone(alert):
            var members: [(String, JSONValue)] = [
                ("alarm", .string(alert.alarm)), ("asset", .string(alert.asset)), ("zone", .string(alert.zone)),
                (
                    "position",
                    alert.position.map { p in
                        .object([
                            ("x", n(r(p.x, 100))), ("y", n(r(p.y, 100))), ("level", n(alert.level.map(Double.init))),
                        ])
                    } ?? .null
                ),
            ]
            if let dwell = alert.dwell { members.append(("dwell_s", n(r(dwell.seconds, 1000)))) }
            return .object(members)
        case let .tag(alert):
            // SPEC §7.4's data for each condition.
            func place(_ fix: AssetFix?, _ at: Timestamp?) -> JSONValue {
                guard let fix else { return .null }
                var members: [(String, JSONValue)] = [
                    ("x", n(r(fix.position.x, 100))), ("y", n(r(fix.position.y, 100))), ("level", n(Double(fix.level))),
                    ("zones", .array(fix.zones.map { .string($0) })),
                ]
                if let at { members.append(("at", .string(RFC3339.format(at)))) }
                return .object(members)
            }
            switch alert.condition {
            case .batteryLow:
                return .object([
                    ("asset", .string(alert.asset)),
                    (
                        "battery",
                        .object([
                            ("millivolts", n(alert.batteryMillivolts.map(Double.init))),
                            ("percent", n(alert.batteryPercent.map(Double.init))),
                            ("at", alert.batteryAt.map { .string(RFC3339.format($0)) } ?? .null),
                        ])
                    ), ("temperature_c", n(alert.temperatureC.map { r($0, 100) })),
                ])
            case .missing:
                return .object([
                    ("asset", .string(alert.asset)),
                    ("last_seen", alert.lastSeen.map { .string(RFC3339.format($0)) } ?? .null),
                    ("last_position", place(alert.position, alert.positionAt)),
                ])
            case .found:
                return .object([
                    ("asset", .string(alert.asset)), ("missing_s", n(r(alert.missingFor?.seconds ?? 0, 1000))),
                    ("position", place(alert.position, nil)),
                ])
            }
        case let .zoneVisit(visit):
            return .object([
                ("asset", .string(visit.asset)), ("zone", .string(visit.zone)),
                ("entered", .string(RFC3339.format(visit.entered))), ("left", .string(RFC3339.format(visit.left))),
                ("dwell_s", n(r(visit.dwell.seconds, 1000))),
            ])
        }
    }
}
