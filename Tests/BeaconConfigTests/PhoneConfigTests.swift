import BeaconCore
import Testing

@testable import BeaconConfig

/// SPEC §9: `assets[].beacon: {irk}` names a phone or a watch by its identity resolving key.
@Suite struct PhoneConfigTests {
    func errors(_ yaml: String) -> [String] {
        do {
            _ = try ConfigLoader.load(yaml: yaml, file: "beacond.yaml")
            return []
        } catch {
            return error.errors.map(\.description)
        }
    }

    @Test func anIRKIsAPhonesTag() throws {
        let config = try ConfigLoader.load(
            yaml: "assets:\n  - {id: anna, name: Anna's phone, beacon: {irk: EC0234A357C8AD05341010A60A397D9B}}\n",
            file: "beacond.yaml")
        #expect(config.assets[0].beacon == .irk(IdentityResolvingKey(hex: "ec0234a357c8ad05341010a60a397d9b")!))
        #expect(config.siteModel.assets[0].tag == .irk(IdentityResolvingKey(hex: "ec0234a357c8ad05341010a60a397d9b")!))
    }

    @Test func aWrongKeyIsLocatedAndSaysWhereKeysComeFrom() {
        #expect(
            errors("assets:\n  - {id: anna, beacon: {irk: ec0234a357c8}}\n") == [
                "beacond.yaml:2:30: assets[0].beacon.irk: expected an identity resolving key of 32 hex digits (beaconctl enroll prints it), got 12 characters (not shown: a key is a secret)"
            ])
        #expect(
            errors(
                "assets:\n  - {id: anna, beacon: {irk: ec0234a357c8ad05341010a60a397d9b, address: \"AA:BB:CC:DD:EE:FF\"}}\n"
            ) == [
                "beacond.yaml:2:24: assets[0].beacon: an irk names a phone or a watch by itself: give it alone"
            ])
    }
}
