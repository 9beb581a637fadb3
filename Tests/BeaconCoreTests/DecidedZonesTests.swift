import BeaconCore
import Testing

/// A new locator's zone alerts checked against what the site last decided (SPEC §6.3): what a
/// consumer is told alternates as an asset's visits do, whichever gateway's engine made it.
struct DecidedZonesTests {
    static func key(_ kind: String, _ asset: String = "tag-06", zone: String = "entrance", alarm: String = "traffic")
        -> HandOverKey
    {
        HandOverKey(type: "beacond.zone.\(kind)", subject: asset, zone: zone, alarm: alarm)
    }

    /// The hand-over test's case: the last locator told an enter; this gateway's engine saw
    /// the asset leave (its exit, never decided, dropped by the overlap window) and come back.
    /// Its enter repeats; its next exit does not; the enter after that does not either.
    @Test func anEnterAfterAnEnterRepeatsAndVisitsAlternate() {
        var ledger = DecidedZones()
        #expect(!ledger.repeats(key: Self.key("enter"), id: "new"), "nothing decided yet")
        ledger.decided(key: Self.key("enter"), id: "D1", time: .seconds(1))
        #expect(ledger.repeats(key: Self.key("enter"), id: "new"))
        #expect(!ledger.repeats(key: Self.key("dwell"), id: "new"))
        #expect(!ledger.repeats(key: Self.key("exit"), id: "new"))
        ledger.decided(key: Self.key("dwell"), id: "D2", time: .seconds(2))
        #expect(ledger.repeats(key: Self.key("dwell"), id: "new") && ledger.repeats(key: Self.key("enter"), id: "new"))
        ledger.decided(key: Self.key("exit"), id: "D3", time: .seconds(3))
        #expect(ledger.repeats(key: Self.key("exit"), id: "new") && ledger.repeats(key: Self.key("dwell"), id: "new"))
        #expect(!ledger.repeats(key: Self.key("enter"), id: "new"))
    }

    /// Places are asset, zone and alarm: another asset, zone or alarm is not a repeat; other
    /// events (tags' alerts, regions) are never checked.
    @Test func placesAreAssetZoneAndAlarmAndOnlyZoneAlertsAreChecked() {
        var ledger = DecidedZones()
        ledger.decided(key: Self.key("enter"), id: "D4", time: .seconds(4))
        #expect(!ledger.repeats(key: Self.key("enter", "tag-07"), id: "new"))
        #expect(!ledger.repeats(key: Self.key("enter", zone: "checkout"), id: "new"))
        #expect(!ledger.repeats(key: Self.key("enter", alarm: "dock-watch"), id: "new"))
        let missing = HandOverKey(type: "beacond.asset.missing", subject: "tag-06")
        ledger.decided(key: missing, id: "D5", time: .seconds(5))
        #expect(!ledger.repeats(key: missing, id: "new"))
        #expect(DecidedZones.parse(key: HandOverKey(type: "beacond.zone.enterd", subject: "a", zone: "z")) == nil)
        let place = DecidedZones.parse(key: HandOverKey(type: "beacond.zone.exit", subject: "a", zone: "z", alarm: "x"))
        #expect(place?.place.asset == "a" && place?.place.zone == "z" && place?.place.alarm == "x")
        #expect(place?.alert == .exit)
    }

    /// The same alert told again — a locator that decided it, lost the broker before it was
    /// delivered, and tells what it holds when it is back — is not a repeat of itself: the
    /// outage test lost an exit that way.
    @Test func theSameAlertToldAgainIsNotARepeatOfItself() {
        var ledger = DecidedZones()
        ledger.decided(key: Self.key("enter"), id: "E1", time: .seconds(6))
        ledger.decided(key: Self.key("exit"), id: "E8", time: .seconds(7))
        #expect(!ledger.repeats(key: Self.key("exit"), id: "E8"))
        #expect(ledger.repeats(key: Self.key("exit"), id: "E9"))
    }

    /// Issue 51, item 3: a decision older than the one known for its place (replayed late, or
    /// stale on purpose) does not undo it: the locator's next enter is no repeat.
    @Test func anOlderDecisionDoesNotUndoANewerOne() {
        var ledger = DecidedZones()
        ledger.decided(key: Self.key("exit"), id: "X2", time: .seconds(200))
        ledger.decided(key: Self.key("enter"), id: "S1", time: .seconds(100))
        #expect(!ledger.repeats(key: Self.key("enter"), id: "new"), "the stale enter was taken")
        ledger.decided(key: Self.key("enter"), id: "E3", time: .seconds(300))
        #expect(ledger.repeats(key: Self.key("enter"), id: "new"))
    }
}
