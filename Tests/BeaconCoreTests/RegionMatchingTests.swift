import Testing

@testable import BeaconCore

/// SPEC §3 matching: uuid, and major/minor where the region gives them.
@Suite struct RegionMatchingTests {
    @Test func regionsMatchByUUIDMajorAndMinor() {
        var s = Script(
            Fixture.engine([
                Fixture.region("uuid"), Fixture.region("major", major: 42),
                Fixture.region("minor", major: 42, minor: 7),
                Fixture.region("other-minor", major: 42, minor: 8),
                Fixture.region("other-uuid", uuid: Fixture.otherUUID),
            ]))
        s.see(from: 0, to: 31)
        #expect(
            s.lines() == [
                "1 region.state app/uuid inside", "1 region.state app/major inside", "1 region.state app/minor inside",
                "30 region.state app/other-minor outside", "30 region.state app/other-uuid outside",
            ])
    }

    @Test func uuidOnlyRegionStaysInsideWhileAnyMatchingBeaconIs() {
        // Given a uuid-only region, inside because of beacon 42/7
        var s = Script(Fixture.engine([Fixture.region("store")]))
        s.advance(to: 30)
        s.see(from: 40, to: 100, major: 42, minor: 7)
        // When 42/7 leaves at 100 s but 43/1 is there from 90 s to 200 s
        s.see(from: 90, to: 200, major: 43, minor: 1)
        s.advance(to: 400)
        // Then there is one visit, ending 30 s after the last beacon went
        #expect(
            s.lines() == [
                "30 region.state app/store outside", "41 region.enter app/store 42/7 -60",
                "230 region.exit app/store last_seen=200 duration=159s",
            ])
    }

    @Test func sightingsOfDifferentBeaconsCountTogetherForAUUIDRegion() {
        var s = Script(Fixture.engine([Fixture.region("store")]))
        s.advance(to: 30)
        s.see(Fixture.sighting(40, major: 1, minor: 1))
        s.see(Fixture.sighting(41, major: 2, minor: 2))
        #expect(s.lines() == ["30 region.state app/store outside", "41 region.enter app/store 2/2 -60"])
    }

    @Test func uuidParsingIsCaseInsensitive() {
        #expect(BeaconUUID("e2c56db5-dffb-48d2-b060-d0f5a71096e0") == Fixture.storeUUID)
        #expect(Fixture.storeUUID.description == "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
        #expect(BeaconUUID("E2C56DB5DFFB48D2B060D0F5A71096E0") == nil)
        #expect(BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096EG") == nil)
    }

    @Test func manyClientsMonitoringOneBeaconEachGetTheirEvents() {
        // 50 clients × 20 regions over one uuid; each client has one region for major 42.
        var engine = BeaconEngine(
            configuration: EngineConfiguration(
                clients: (0..<50).map { c in
                    ClientSpec(
                        id: "c\(c)", regions: (0..<20).map { r in Fixture.region("r\(r)", major: UInt16(40 + r)) })
                }), start: Fixture.at(0))
        var events: [Event] = []
        events += engine.advance(to: Fixture.at(30))
        events += engine.ingest(Fixture.sighting(40))
        events += engine.ingest(Fixture.sighting(41))
        let enters = events.filter(\.isEnter).map { CloudEvent.subject($0.payload) }
        #expect(enters == (0..<50).map { "c\($0)/r2" })
    }
}
