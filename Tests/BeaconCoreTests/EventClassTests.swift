import Testing

@testable import BeaconCore

/// Issue 53: an event's class decided in one place. Every kind of payload is classed the same
/// by its payload and by its type as the history, the outboxes and the broker carry it.
@Suite struct EventClassTests {
    static let t = Timestamp.seconds(1_763_805_600)
    static let beacon = IBeaconID(uuid: BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 2)

    /// One payload of every kind there is.
    static var payloads: [EventPayload] {
        let fix = AssetFix(asset: "a", position: Point(x: 1, y: 2), level: 0, accuracy: 1, zones: [], receivers: [])
        var all: [EventPayload] = [
            .regionState(client: "c", region: "r", state: .inside),
            .regionEnter(client: "c", region: "r", beacon: beacon, receiver: "hci0", rssi: -60, distance: 1),
            .regionExit(client: "c", region: "r", lastSeen: t, duration: .seconds(5)),
            .regionDwell(client: "c", region: "r", dwell: .minutes(1)),
            .regionFailed(client: "c", region: "r", reason: .regionLimitExceeded),
            .ranging(client: "c", region: "r", beacons: []),
            .beaconProximity(beacon: .ibeacon(beacon), proximity: .near, distance: 1),
            .adapterState(adapter: "hci0", present: true, powered: true, discovering: true),
            .assetPosition(fix),
        ]
        for condition in [AlarmDefinition.Condition.enter, .exit, .dwell, .flapping] {
            all.append(
                .zone(ZoneAlert(alarm: "x", asset: "a", zone: "z", condition: condition, position: nil, level: nil)))
        }
        for condition in [TagAlert.Condition.batteryLow, .missing, .found] {
            all.append(.tag(TagAlert(asset: "a", condition: condition)))
        }
        all.append(.zoneVisit(ZoneVisit(asset: "a", zone: "z", entered: t, left: t + .seconds(30))))
        return all
    }

    @Test func everyKindIsClassedAlikeByItsPayloadAndItsType() {
        let payloads = Self.payloads
        #expect(Set(payloads.map(\.kind)) == Set(EventPayload.allKinds), "a kind without a payload here")
        for payload in payloads {
            let byPayload = EventClass(payload)
            #expect(EventClass(type: payload.kind) == byPayload, "\(payload.kind)")
            #expect(EventClass(type: "beacond." + payload.kind) == byPayload, "\(payload.kind)")
        }
        #expect(EventClass(type: "beacond.something.new") == .alert, "an unknown type is kept as an alert")
        #expect(
            EventClass.measurement.types.sorted() == ["beacond.beacon.proximity", "beacond.ranging"])
        #expect(EventClass.position.types == ["beacond.asset.position"])
        #expect(EventClass.allCases.filter(\.isState) == [.position], "positions alone are kept as state")
        #expect(EventClass.local.types == ["beacond.adapter.state"])
    }

    /// The places that treat kinds apart ask the class: the history's retention and the site's
    /// hand-over here (the outboxes' and the broker's in `EventClassUseTests`).
    @Test func theHistoryAndTheHandOverAskTheClass() {
        for kind in EventPayload.allKinds {
            let c = EventClass(type: kind)
            #expect(HistoryRetention.isTelemetry("beacond." + kind) == c.isSuperseded, "\(kind)")
            #expect(SiteDecision.handedOver(type: "beacond." + kind) == (c == .alert), "\(kind)")
        }
    }

    /// Issue 54: the hand-over key made from the engine's value is the one read from the
    /// CloudEvent it wrote, for every kind, so the engine's thread parses no JSON per alert.
    @Test func theKeyFromThePayloadIsTheKeyReadFromItsCloudEvent() {
        for payload in Self.payloads {
            let body = CloudEvent.text(Event(time: Self.t, payload: payload), id: "e1", gatewayID: "gw1")
            let key = HandOverKey(payload: payload)
            #expect(key == HandOverKey(body: body), "\(payload.kind)")
            // Four parts whatever the fields hold: two keys never share the wire's text.
            #expect(key.text.split(separator: "|", omittingEmptySubsequences: false).count == 4, "\(key.text)")
        }
    }
}
