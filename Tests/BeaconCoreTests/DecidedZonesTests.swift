import BeaconCore
import Testing

/// A new locator's zone alerts checked against what the site last decided (SPEC §6.3): what a
/// consumer is told alternates as an asset's visits do, whichever gateway's engine made it.
struct DecidedZonesTests {
    static func key(_ kind: String, _ asset: String = "tag-06", zone: String = "entrance", alarm: String = "traffic")
        -> String
    {
        "beacond.zone.\(kind)|\(asset)|\(zone)|\(alarm)"
    }

    /// The hand-over test's case: the last locator told an enter; this gateway's engine saw
    /// the asset leave (its exit, never decided, dropped by the overlap window) and come back.
    /// Its enter repeats; its next exit does not; the enter after that does not either.
    @Test func anEnterAfterAnEnterRepeatsAndVisitsAlternate() {
        var ledger = DecidedZones()
        #expect(!ledger.repeats(key: Self.key("enter")), "nothing decided yet")
        ledger.decided(key: Self.key("enter"))
        #expect(ledger.repeats(key: Self.key("enter")))
        #expect(!ledger.repeats(key: Self.key("dwell")))
        #expect(!ledger.repeats(key: Self.key("exit")))
        ledger.decided(key: Self.key("dwell"))
        #expect(ledger.repeats(key: Self.key("dwell")) && ledger.repeats(key: Self.key("enter")))
        ledger.decided(key: Self.key("exit"))
        #expect(ledger.repeats(key: Self.key("exit")) && ledger.repeats(key: Self.key("dwell")))
        #expect(!ledger.repeats(key: Self.key("enter")))
    }

    /// Places are asset, zone and alarm: another asset, zone or alarm is not a repeat; other
    /// events (tags' alerts, regions) are never checked.
    @Test func placesAreAssetZoneAndAlarmAndOnlyZoneAlertsAreChecked() {
        var ledger = DecidedZones()
        ledger.decided(key: Self.key("enter"))
        #expect(!ledger.repeats(key: Self.key("enter", "tag-07")))
        #expect(!ledger.repeats(key: Self.key("enter", zone: "checkout")))
        #expect(!ledger.repeats(key: Self.key("enter", alarm: "dock-watch")))
        ledger.decided(key: "beacond.asset.missing|tag-06||")
        #expect(!ledger.repeats(key: "beacond.asset.missing|tag-06||"))
        #expect(DecidedZones.parse(key: "beacond.zone.enterd|a|z|x") == nil)
        #expect(DecidedZones.parse(key: "beacond.zone.exit|a|z|x")?.place == "a|z|x")
    }
}
