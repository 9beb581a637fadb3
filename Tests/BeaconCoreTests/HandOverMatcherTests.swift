import Testing

@testable import BeaconCore

/// SPEC §6.3, a hand-over that neither repeats nor re-decides: each standby pairs the
/// locator's decisions with its own copies of the same alerts, whichever comes first.
@Suite struct HandOverMatcherTests {
    static func body(_ type: String, _ asset: String, zone: String, at t: Double, id: String = "X") -> String {
        """
        {"specversion":"1.0","id":"\(id)","source":"beacond://s","type":"beacond.\(type)","time":"\(t)",\
        "subject":"\(asset)","data":{"alarm":"traffic","asset":"\(asset)","zone":"\(zone)","position":{"x":\(t)}}}
        """
    }

    static func decision(_ id: String, _ type: String, _ asset: String, zone: String, at t: Double) -> SiteDecision {
        let body = body(type, asset, zone: zone, at: t, id: id)
        return SiteDecision(
            id: id, key: HandOverKey(body: body)!, time: Fixture.at(t),
            enqueuedAt: Fixture.at(t) + .milliseconds(10),
            body: body)
    }

    @Test func theKeyIsTypeSubjectZoneAndAlarmNotPositionOrTime() {
        let a = HandOverKey(body: Self.body("zone.enter", "cart-1", zone: "dock", at: 1))
        let b = HandOverKey(body: Self.body("zone.enter", "cart-1", zone: "dock", at: 2.5))
        #expect(a?.text == "beacond.zone.enter|cart-1|dock|traffic" && a == b)
        #expect(a != HandOverKey(body: Self.body("zone.exit", "cart-1", zone: "dock", at: 1)))
        #expect(a != HandOverKey(body: Self.body("zone.enter", "cart-1", zone: "aisle", at: 1)))
        #expect(HandOverKey(body: "not json") == nil)
        #expect(
            SiteDecision.handedOver(type: "beacond.zone.enter") && SiteDecision.handedOver(type: "beacond.region.exit"))
        #expect(!SiteDecision.handedOver(type: "beacond.asset.position"))
    }

    @Test func aDecisionThatComesFirstWaitsForTheOwnCopy() {
        var m = HandOverMatcher()
        let theirs = Self.decision("L1", "zone.enter", "cart-1", zone: "dock", at: 10)
        #expect(m.decided(theirs, at: Fixture.at(10)) == nil)
        // This gateway's engine is 300 ms behind: its copy takes the locator's decision.
        let key = theirs.key
        #expect(m.madeHere(id: "O1", key: key, time: Fixture.at(10.3), wait: true, at: Fixture.at(10.4)) == theirs)
        #expect(m.held == 0)
    }

    @Test func anOwnCopyThatComesFirstWaitsForTheDecision() {
        var m = HandOverMatcher()
        let theirs = Self.decision("L1", "zone.exit", "cart-1", zone: "dock", at: 20)
        #expect(m.madeHere(id: "O1", key: theirs.key, time: Fixture.at(19.8), wait: true, at: Fixture.at(19.8)) == nil)
        #expect(m.decided(theirs, at: Fixture.at(20.1)) == "O1")
        #expect(m.held == 0)
        // Not waiting (this gateway is the locator): nothing is kept to pair later.
        #expect(m.madeHere(id: "O2", key: theirs.key, time: Fixture.at(30), wait: false, at: Fixture.at(30)) == nil)
        #expect(m.held == 0)
    }

    @Test func repeatedAlertsOfOneKeyPairInOrderAndFarTimesDoNotPair() {
        var m = HandOverMatcher()
        let first = Self.decision("L1", "zone.enter", "cart-1", zone: "dock", at: 100)
        let second = Self.decision("L2", "zone.enter", "cart-1", zone: "dock", at: 106)
        #expect(m.decided(first, at: Fixture.at(100)) == nil)
        #expect(m.decided(second, at: Fixture.at(106)) == nil)
        #expect(m.madeHere(id: "O1", key: first.key, time: Fixture.at(100.2), wait: true, at: Fixture.at(107)) == first)
        #expect(
            m.madeHere(id: "O2", key: first.key, time: Fixture.at(106.2), wait: true, at: Fixture.at(107)) == second)
        // 30 s apart: another alert, not this one.
        let late = Self.decision("L3", "zone.enter", "cart-1", zone: "dock", at: 200)
        #expect(m.madeHere(id: "O3", key: late.key, time: Fixture.at(170), wait: true, at: Fixture.at(171)) == nil)
        #expect(m.decided(late, at: Fixture.at(200)) == nil)
        #expect(m.held == 2, "O3 and L3 each wait for their own pair")
    }

    @Test func whatStaysUnpairedIsForgottenAndTheTableIsBounded() {
        var m = HandOverMatcher()
        for i in 0..<(HandOverMatcher.limit + 5) {
            let seen = Fixture.at(1) + TimeSpan(nanoseconds: Int64(i) * 1_000)
            _ = m.decided(Self.decision("L\(i)", "zone.enter", "cart-\(i)", zone: "dock", at: 1), at: seen)
        }
        #expect(m.held == HandOverMatcher.limit)
        // The oldest went first: cart-0's decision is gone, the newest is kept.
        let key0 = HandOverKey(body: Self.body("zone.enter", "cart-0", zone: "dock", at: 1))!
        #expect(m.madeHere(id: "O", key: key0, time: Fixture.at(1), wait: false, at: Fixture.at(2)) == nil)
        let newest = HandOverKey(
            body: Self.body("zone.enter", "cart-\(HandOverMatcher.limit + 4)", zone: "dock", at: 1))!
        #expect(m.madeHere(id: "O", key: newest, time: Fixture.at(1), wait: false, at: Fixture.at(2)) != nil)
        // A minute on, nothing is held.
        _ = m.madeHere(
            id: "P", key: HandOverKey(type: "k", subject: "k"), time: Fixture.at(100), wait: false, at: Fixture.at(100))
        #expect(m.held == 0)
    }

    @Test func decidedMessagesRoundTripAndABadLineRefusesTheMessage() throws {
        let decisions = [
            Self.decision("01M8FS1QG2BRPQDA800000001V", "zone.enter", "tag-14", zone: "aisle-3", at: 0.5),
            Self.decision("01M8FS1RFABRPQDA8000000023", "zone.exit", "tag-14", zone: "aisle-3", at: 1.25),
        ]
        let text = SiteDecision.message(decisions)
        #expect(SiteDecision.decisions(in: text) == decisions)
        #expect(SiteDecision.decisions(in: text + "\n{\"id\":\"x\"}") == nil)
        // A key that does not match its body: refused (a standby would pair the wrong alert).
        var wrong = decisions[0]
        wrong.key = HandOverKey(type: "beacond.zone.exit", subject: "tag-14", zone: "aisle-3", alarm: "traffic")
        #expect(SiteDecision.decisions(in: wrong.line) == nil)
        // Ids are ids: a line cannot smuggle SQL or topic levels in.
        var badID = decisions[0]
        badID.id = "a/b"
        #expect(SiteDecision.decisions(in: badID.line) == nil)
    }
}
