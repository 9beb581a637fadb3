import Testing

@testable import BeaconCore

/// SPEC §3: CloudEvents 1.0 JSON, ids unique and sortable, time from the cause.
@Suite struct CloudEventTests {
    @Test func regionEnterAsCloudEvent() {
        let event = Event(
            time: Fixture.at(12.3456),
            payload: .regionEnter(
                client: "storefront", region: "store", beacon: Fixture.beacon, receiver: "hci0", rssi: -67,
                distance: 2.238_72))
        let json = CloudEvent.text(event, id: "01KANG389M8F87P5G000000001", gatewayID: "store-042-gw1")
        #expect(
            json
                == #"{"specversion":"1.0","id":"01KANG389M8F87P5G000000001","source":"beacond://store-042-gw1","type":"beacond.region.enter","time":"2025-11-22T10:00:12.345Z","subject":"storefront/store","datacontenttype":"application/json","dataschema":"urn:beacond:schema:region.enter:1","data":{"client":"storefront","region":"store","beacon":{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":42,"minor":7},"receiver":"hci0","rssi":-67,"distance":2.24}}"#
        )
    }

    @Test func exitDwellFailedAndStatePayloads() {
        let exit = CloudEvent.dataText(
            .regionExit(client: "c", region: "r", lastSeen: Fixture.at(1.5), duration: .milliseconds(90_250)))
        #expect(
            exit == #"{"client":"c","region":"r","last_seen":"2025-11-22T10:00:01.500Z","duration_s":90.25}"#
        )
        #expect(
            CloudEvent.dataText(.regionDwell(client: "c", region: "r", dwell: .minutes(2)))
                == #"{"client":"c","region":"r","dwell_s":120}"#)
        #expect(
            CloudEvent.dataText(.regionFailed(client: "c", region: "r", reason: .regionLimitExceeded))
                == #"{"client":"c","region":"r","reason":"region_limit_exceeded"}"#)
        #expect(
            CloudEvent.dataText(.regionState(client: "c", region: "r", state: .unknown))
                == #"{"client":"c","region":"r","state":"unknown"}"#)
    }

    @Test func idsAreUniqueAndSortInPublicationOrder() {
        var ids = EventIDGenerator(nonce: 0xDEAD_BEEF)
        var previous = ""
        var seen = Set<String>()
        // Same millisecond many times, then a late (earlier) time: ids still increase.
        let times =
            Array(repeating: Fixture.at(1), count: 1000) + [Fixture.at(0.5), Fixture.at(2), Fixture.at(100_000)]
        for t in times {
            let id = ids.next(for: t)
            #expect(id.utf8.count == 26)
            #expect(id > previous)
            #expect(seen.insert(id).inserted)
            previous = id
        }
    }

    @Test func idsFromTwoProcessesDoNotCollide() {
        var a = EventIDGenerator(nonce: 1)
        var b = EventIDGenerator(nonce: 2)
        #expect(a.next(for: Fixture.at(1)) != b.next(for: Fixture.at(1)))
    }

    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"), (Int64(1_763_805_600_125_000_000), "2025-11-22T10:00:00.125Z"),
        (Int64(951_782_400_000_000_000), "2000-02-29T00:00:00.000Z"), (Int64(-1_000_000), "1969-12-31T23:59:59.999Z"),
        (Int64(4_102_444_799_999_000_000), "2099-12-31T23:59:59.999Z"),
    ])
    func rfc3339(nanoseconds: Int64, text: String) {
        #expect(RFC3339.format(Timestamp(nanoseconds: nanoseconds)) == text)
    }
}
