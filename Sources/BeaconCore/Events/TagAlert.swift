/// What a tag's own state raises (SPEC §7.4): its battery fell below `battery_low` (once per
/// fall), it was not heard for `missing_after`, it was heard again after that.
public struct TagAlert: Sendable, Equatable {
    public enum Condition: String, Sendable {
        case batteryLow = "battery_low"
        case missing, found
    }

    public var asset: String
    public var condition: Condition
    /// battery_low: the reading that was low, and when it was read.
    public var batteryMillivolts: Int?
    public var batteryPercent: Int?
    public var batteryAt: Timestamp?
    public var temperatureC: Double?
    /// missing: when it was last heard, and its last position (nil when never placed).
    public var lastSeen: Timestamp?
    public var position: AssetFix?
    /// missing: when `position` was made.
    public var positionAt: Timestamp?
    /// found: how long it was not heard.
    public var missingFor: TimeSpan?

    public init(asset: String, condition: Condition) {
        self.asset = asset
        self.condition = condition
    }
}
