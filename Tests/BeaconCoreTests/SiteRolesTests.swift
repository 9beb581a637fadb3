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

    /// Issue 51, item 3: only the site's locator decides. A standby's `decided` messages are
    /// refused; so is this gateway's own name; the last locator's are taken for a grace after
    /// the next one is announced (its last decisions may arrive after the announcement).
    @Test func onlyTheLocatorDecidesAndTheLastOneForAGrace() {
        var r = roles()
        for (id, priority) in [("gw2", 50), ("gw3", 10)] {
            r.online[id] = true
            r.info[id] = GatewayInfo(locator: true, priority: priority)
            r.lastHeard[id] = Self.t0
            r.refresh(id, at: Self.t0)
        }
        r.election.seen(.init(gateway: "gw2", epoch: 1, since: Self.t0))
        #expect(r.mayDecide("gw2", at: Self.t0) && !r.mayDecide("gw3", at: Self.t0))
        #expect(!r.mayDecide("gw1", at: Self.t0), "no one decides in this gateway's name")
        // A forged announcement naming gw3: it is still not the one the rule chooses.
        var forged = r
        forged.election.seen(.init(gateway: "gw3", epoch: 2, since: Self.t0), live: true)
        #expect(!forged.mayDecide("gw3", at: Self.t0))
        // gw2 goes silent, gw3 is chosen and announced; gw2's late decisions for a grace.
        r.online["gw2"] = false
        r.refresh("gw2", at: Self.t0 + .seconds(1))
        let before = r.election.announced?.gateway
        r.election.seen(.init(gateway: "gw3", epoch: 2, since: Self.t0 + .seconds(1)), live: true)
        r.announcementChanged(from: before, at: Self.t0 + .seconds(1))
        #expect(r.mayDecide("gw3", at: Self.t0 + .seconds(2)))
        #expect(r.mayDecide("gw2", at: Self.t0 + .seconds(2)))
        #expect(!r.mayDecide("gw2", at: Self.t0 + .seconds(1) + SiteRoles.decisionGrace))
    }

    /// Issue 51, item 0: back on the broker after it restarted, a gateway counts the others
    /// whose status says online as alive for `rejoinGrace`, however long ago they were heard:
    /// the locator, still reconnecting, keeps its role instead of losing it to the first back.
    @Test func backOnTheBrokerTheOthersHaveAGraceToRejoin() {
        var r = roles()
        r.online["gw2"] = true
        r.info["gw2"] = GatewayInfo(locator: true, priority: 150)
        r.lastHeard["gw2"] = Self.t0
        r.refresh("gw2", at: Self.t0 + .seconds(30))
        #expect(r.election.chosen == nil, "not heard for 30 s")
        r.rejoined(at: Self.t0 + .seconds(30))
        r.refresh("gw2", at: Self.t0 + .seconds(35))
        #expect(r.election.chosen == "gw2", "reconnecting too")
        r.refresh("gw2", at: Self.t0 + .seconds(30) + SiteRoles.rejoinGrace)
        #expect(r.election.chosen == nil, "the grace is over and it was not heard")
    }
}
