import Testing

@testable import BeaconCore

/// SPEC §6.3: one locator at a time, chosen by priority among the eligible gateways online.
@Suite struct LocatorElectionTests {
    typealias C = LocatorElection.Candidate

    @Test func theHighestPriorityOnlineAnnouncesItselfAndTheOthersAgree() {
        var gw1 = LocatorElection(me: C(id: "gw1", priority: 100))
        var gw2 = LocatorElection(me: C(id: "gw2", priority: 50))
        for e in [0, 1] {
            var election = e == 0 ? gw1 : gw2
            election.online(C(id: "gw1", priority: 100))
            election.online(C(id: "gw2", priority: 50))
            if e == 0 { gw1 = election } else { gw2 = election }
        }
        #expect(gw2.decide(at: Fixture.at(1)) == nil)
        let announcement = gw1.decide(at: Fixture.at(1))
        #expect(announcement == .init(gateway: "gw1", epoch: 1, since: Fixture.at(1)))
        #expect(gw1.isLocator)
        gw2.seen(announcement!)
        #expect(!gw2.isLocator && gw2.chosen == "gw1")
        // Said once: no second announcement while nothing changes.
        #expect(gw1.decide(at: Fixture.at(2)) == nil)
    }

    @Test func whenTheLocatorGoesOfflineTheNextTakesOverWithTheNextEpoch() {
        var gw2 = LocatorElection(me: C(id: "gw2", priority: 50))
        gw2.online(C(id: "gw1", priority: 100))
        gw2.online(C(id: "gw2", priority: 50))
        gw2.online(C(id: "gw3", priority: 10))
        gw2.seen(.init(gateway: "gw1", epoch: 4, since: Fixture.at(0)))
        #expect(gw2.decide(at: Fixture.at(5)) == nil)
        gw2.offline("gw1")  // its last will
        #expect(!gw2.isLocator)
        #expect(gw2.decide(at: Fixture.at(6)) == .init(gateway: "gw2", epoch: 5, since: Fixture.at(6)))
        #expect(gw2.isLocator)
        // gw1 returns with the higher priority: it takes the role back, and gw2 yields.
        gw2.online(C(id: "gw1", priority: 100))
        #expect(!gw2.isLocator)
        gw2.seen(.init(gateway: "gw1", epoch: 6, since: Fixture.at(9)))
        #expect(!gw2.isLocator && gw2.decide(at: Fixture.at(9)) == nil)
    }

    @Test func equalPrioritiesGoToTheLowestIdAndRelaysNeverAnnounce() {
        var gwB = LocatorElection(me: C(id: "gw-b", priority: 100))
        gwB.online(C(id: "gw-a", priority: 100))
        gwB.online(C(id: "gw-b", priority: 100))
        #expect(gwB.chosen == "gw-a" && gwB.decide(at: Fixture.at(1)) == nil)
        var relay = LocatorElection(me: nil)
        relay.online(C(id: "gw-a", priority: 100))
        #expect(relay.decide(at: Fixture.at(1)) == nil && !relay.isLocator)
    }

    /// Issue 38 #20: a forged epoch of 8,999,999,999,999,999 pinned the announcement: no later
    /// one could be newer, so the site kept naming the forged gateway. The chosen gateway's
    /// live announcement is taken whatever its epoch, and epochs stop at the highest.
    @Test func aForgedTopEpochCannotPinTheAnnouncement() throws {
        var gw2 = LocatorElection(me: C(id: "gw2", priority: 50))
        gw2.online(C(id: "gw1", priority: 100))
        gw2.online(C(id: "gw2", priority: 50))
        let forged = try #require(
            LocatorElection.Announcement(
                payload: #"{"gateway":"gw2","epoch":8999999999999999,"since":"2026-01-01T00:00:00Z"}"#,
                seenAt: Fixture.at(1)))
        gw2.seen(forged)
        #expect(gw2.announced?.gateway == "gw2")
        var gw1 = LocatorElection(me: C(id: "gw1", priority: 100))
        gw1.online(C(id: "gw1", priority: 100))
        gw1.online(C(id: "gw2", priority: 50))
        gw1.seen(forged)
        let decided = gw1.decide(at: Fixture.at(2))
        let next = try #require(decided)
        #expect(next.epoch == LocatorElection.maxEpoch && gw1.isLocator)
        // Its announcement reads back, and gw2 takes it live though its epoch is not newer.
        let read = try #require(LocatorElection.Announcement(payload: next.text, seenAt: Fixture.at(2)))
        gw2.seen(read, live: true)
        #expect(gw2.announced?.gateway == "gw1" && !gw2.isLocator)
        // A retained replay of the forgery does not take it back.
        gw2.seen(forged)
        #expect(gw2.announced?.gateway == "gw1")
    }

    @Test func aStaleAnnouncementReplayedLateIsIgnored() {
        var e = LocatorElection(me: C(id: "gw1", priority: 1))
        e.seen(.init(gateway: "gw2", epoch: 7, since: Fixture.at(7)))
        e.seen(.init(gateway: "gw3", epoch: 3, since: Fixture.at(3)))
        #expect(e.announced?.gateway == "gw2")
    }

    @Test func noEligibleGatewayOnlineMeansNoLocator() {
        var e = LocatorElection(me: C(id: "gw1", priority: 1))
        #expect(e.chosen == nil && e.decide(at: Fixture.at(1)) == nil && !e.isLocator)
    }
}

@Suite struct LocatorPayloadTests {
    @Test func announcementsAndInfoReadBackAndRubbishIsRefused() {
        let a = LocatorElection.Announcement(gateway: "gw1", epoch: 3, since: Fixture.at(0))
        #expect(a.text == #"{"gateway":"gw1","epoch":3,"since":"2025-11-22T10:00:00.000Z"}"#)
        #expect(
            LocatorElection.Announcement(payload: a.text, seenAt: Fixture.at(5))
                == .init(gateway: "gw1", epoch: 3, since: Fixture.at(5)))
        for bad in [
            "", "null", #"{"gateway":"g w","epoch":1}"#, #"{"gateway":"gw1","epoch":-1}"#,
            #"{"gateway":"gw1","epoch":1.5}"#,
        ] {
            #expect(LocatorElection.Announcement(payload: bad, seenAt: Fixture.at(0)) == nil, "\(bad)")
        }
        let info = GatewayInfo(locator: false, priority: 50)
        #expect(info.text == #"{"locator":false,"priority":50}"#)
        #expect(GatewayInfo(payload: info.text) == info)
        #expect(GatewayInfo(payload: #"{"locator":"yes","priority":1}"#) == nil)
    }
}
