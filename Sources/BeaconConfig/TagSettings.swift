import BeaconCore

/// `tags:` (SPEC §7.3): when a tag's battery counts as low, and how long a tag may be silent
/// before it is missing (each asset may say its own `missing_after`).
public struct TagSettings: Sendable, Equatable {
    /// Below this many millivolts, or below `batteryLowPercent` where the frame gives a
    /// percentage, the battery is low. Default 2,500 mV and 20 %.
    public var batteryLowMillivolts = 2500
    public var batteryLowPercent = 20
    /// Not heard this long: missing. Default 10 min, 1 min … 7 days.
    public var missingAfter = TimeSpan.minutes(10)

    public init() {}

    /// How long asset `spec` may be silent before it is missing.
    public func missingAfter(_ spec: AssetSpec) -> TimeSpan { spec.missingAfter ?? missingAfter }

    /// Whether a battery reading is low by these thresholds.
    public func batteryIsLow(millivolts: Int?, percent: Int?) -> Bool {
        rules.batteryIsLow(millivolts: millivolts, percent: percent)
    }

    /// As the engine applies them.
    public var rules: TagRules {
        var rules = TagRules()
        (rules.batteryLowMillivolts, rules.batteryLowPercent) = (batteryLowMillivolts, batteryLowPercent)
        rules.missingAfter = missingAfter
        return rules
    }

    static let missingRange = TimeSpan.minutes(1)...TimeSpan.hours(24 * 7)
}

extension SectionReader {
    func readTags(_ node: Node, _ t: inout TagSettings) {
        let battery: [ConfigField<TagSettings>] = [
            .int("millivolts", 1000...5000, \.batteryLowMillivolts), .int("percent", 0...100, \.batteryLowPercent),
        ]
        read(
            node, "tags",
            [
                .init("battery_low") { r, n, p, t in r.read(n, p, battery, into: &t) },
                .duration("missing_after", TagSettings.missingRange, \.missingAfter),
            ], into: &t)
    }
}
