import BeaconCore
import Testing

@testable import BeaconConfig

/// SPEC §7.3: `tags:` and an asset's own `missing_after`, read and checked like every section.
@Suite struct TagConfigTests {
    static let asset = "assets:\n  - {id: pallet-9, beacon: {address: \"AA:BB:CC:DD:EE:FF\"}, missing_after: 2h}\n"

    @Test func defaultsTheSectionAndAnAssetsOwnMissingAfter() throws {
        let plain = try ConfigLoader.load(yaml: Self.asset, file: "beacond.yaml")
        #expect(plain.tags.batteryLowMillivolts == 2500 && plain.tags.batteryLowPercent == 20)
        #expect(plain.tags.missingAfter == .minutes(10))
        #expect(plain.assets[0].missingAfter == .hours(2))
        let set = try ConfigLoader.load(
            yaml: "tags:\n  battery_low: {millivolts: 2700, percent: 30}\n  missing_after: 30m\n"
                + "assets:\n  - {id: cart-1, beacon: {address: \"AA:BB:CC:DD:EE:01\"}}\n",
            file: "beacond.yaml")
        #expect(set.tags.batteryLowMillivolts == 2700 && set.tags.batteryLowPercent == 30)
        #expect(set.tags.missingAfter == .minutes(30) && set.assets[0].missingAfter == nil)
        #expect(set.tags.batteryIsLow(millivolts: 2650, percent: nil))
        #expect(
            !set.tags.batteryIsLow(millivolts: 2750, percent: nil)
                && set.tags.batteryIsLow(millivolts: nil, percent: 29))
    }

    @Test func mistakesAreLocatedAndNamed() {
        func errors(_ yaml: String) -> [String] {
            do {
                _ = try ConfigLoader.load(yaml: yaml, file: "beacond.yaml")
                return []
            } catch { return error.errors.map(\.description) }
        }
        #expect(
            errors("tags:\n  missing_after: 10s\n") == [
                #"beacond.yaml:2:18: tags.missing_after: must be between 1m and 168h, got "10s""#
            ])
        #expect(
            errors("tags:\n  battery_low: {milivolts: 2500}\n") == [
                #"beacond.yaml:2:17: tags.battery_low.milivolts: unknown key (did you mean "millivolts"?)"#
            ])
        #expect(
            errors("assets:\n  - {id: a, beacon: {address: \"AA:BB:CC:DD:EE:FF\"}, missing_after: forever}\n").count
                == 1)
    }
}
