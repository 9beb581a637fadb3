import BeaconCore
import Testing

/// Who may be chosen locator (SPEC §6.3), from what a gateway has heard: a gateway is a
/// candidate while its status is online, it has been heard lately, and its info lets it
/// locate; this gateway, only once connected and settled.
@Suite struct SiteRolesTests {
    static let t0 = Timestamp(nanoseconds: 1_800_000_000_000_000_000)

    func roles() -> SiteRoles { SiteRoles(election: LocatorElection(me: .init(id: "gw1", priority: 100))) }

    @Test func thisGatewayIsACandidateOnlyConnectedAndSettled() {
        var r = roles()
        r.online["gw1"] = true
        r.info["gw1"] = GatewayInfo(locator: true, priority: 100)
        r.refresh("gw1", at: Self.t0)
        #expect(r.election.chosen == nil, "not connected")
        r.connected = true
        r.connectedSince = Self.t0
        r.refresh("gw1", at: Self.t0 + .milliseconds(1000))
        #expect(r.election.chosen == nil, "not settled: the others' retained messages may not have arrived")
        r.refresh("gw1", at: Self.t0 + SiteRoles.settle)
        #expect(r.election.chosen == "gw1")
        r.connected = false
        r.refresh("gw1", at: Self.t0 + .seconds(2))
        #expect(r.election.chosen == nil, "cut off from the broker: no candidate")
    }

    @Test func anotherGatewayIsACandidateWhileHeard() {
        var r = roles()
        r.online["gw2"] = true
        r.info["gw2"] = GatewayInfo(locator: true, priority: 50)
        r.lastHeard["gw2"] = Self.t0
        r.refresh("gw2", at: Self.t0 + .seconds(3))
        #expect(r.election.chosen == "gw2")
        r.refresh("gw2", at: Self.t0 + SiteRoles.silence)
        #expect(r.election.chosen == nil, "silent for \(SiteRoles.silence.seconds) s: hung or unpowered")
        r.lastHeard["gw2"] = Self.t0 + .seconds(5)
        r.online["gw2"] = false
        r.refresh("gw2", at: Self.t0 + .seconds(5))
        #expect(r.election.chosen == nil, "its status says offline")
    }

    @Test func aGatewayWhoseInfoSaysItMayNotLocateIsNeverChosen() {
        var r = roles()
        r.online["gw3"] = true
        r.lastHeard["gw3"] = Self.t0
        r.refresh("gw3", at: Self.t0)
        #expect(r.election.chosen == nil, "no info yet")
        r.info["gw3"] = GatewayInfo(locator: false, priority: 200)
        r.refresh("gw3", at: Self.t0)
        #expect(r.election.chosen == nil)
        r.info["gw3"] = GatewayInfo(locator: true, priority: 200)
        r.refresh("gw3", at: Self.t0)
        #expect(r.election.chosen == "gw3")
    }
}
