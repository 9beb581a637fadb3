import BeaconCore

/// `tags:` (SPEC §7.3), read into the engine's own `TagRules`: one definition of when a
/// battery is low and when a tag is missing, for the engine that raises the alerts and the
/// API that shows them.
extension SectionReader {
    /// `missing_after`, here and on each asset: 1 min … 7 days.
    static let missingRange = TimeSpan.minutes(1)...TimeSpan.hours(24 * 7)

    func readTags(_ node: Node, _ t: inout TagRules) {
        let battery: [ConfigField<TagRules>] = [
            .int("millivolts", 1000...5000, \.batteryLowMillivolts), .int("percent", 0...100, \.batteryLowPercent),
        ]
        read(
            node, "tags",
            [
                .init("battery_low") { r, n, p, t in r.read(n, p, battery, into: &t) },
                .duration("missing_after", Self.missingRange, \.missingAfter),
            ], into: &t)
    }
}
