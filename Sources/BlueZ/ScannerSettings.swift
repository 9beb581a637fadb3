import BeaconCore

/// How the scanner uses BlueZ. Built from the config's `bluetooth:` section, and replaced
/// by a reload (`BlueZScanner.reconfigure`).
public struct ScannerSettings: Sendable, Equatable {
    /// Adapters to scan with; nil means every adapter BlueZ has.
    public var adapters: Set<String>?
    /// Passed to BlueZ's discovery filter as `RSSI`.
    public var minRSSI: Int
    /// Monitor advertisements passively through AdvertisementMonitorManager1 where the
    /// adapter offers it (falling back to active discovery, logged, where it does not).
    public var passive: Bool
    /// No advertisement for this long while discovering: discovery is restarted.
    public var silenceRestart = TimeSpan.seconds(60)
    /// Still silent this long after the restart: the adapter is power-cycled.
    public var silencePowerCycle = TimeSpan.minutes(3)
    /// Devices that discovery created and that have not been heard this long are removed
    /// from BlueZ's cache (never paired, trusted or connected ones).
    public var deviceTTL = TimeSpan.minutes(2)
    /// How often the device cache is swept.
    public var sweepInterval = TimeSpan.seconds(30)
    /// The calibration advertisement of each adapter that sends one (by adapter name).
    public var advertisements: [String: BeaconAdvertisement] = [:]

    public init(
        adapters: Set<String>? = nil, minRSSI: Int = -100, passive: Bool = false,
        silenceRestart: TimeSpan = .seconds(60),
        deviceTTL: TimeSpan = .minutes(2)
    ) {
        self.adapters = adapters
        self.minRSSI = minRSSI
        self.passive = passive
        self.silenceRestart = silenceRestart
        self.silencePowerCycle = silenceRestart * 3
        self.deviceTTL = deviceTTL
        self.sweepInterval = min(.seconds(30), max(.seconds(1), deviceTTL))
    }
}

/// What the scanner tells the runtime. Sightings are batched per loop turn, so the hop to
/// the engine costs one lock per batch, not one per advertisement.
public enum ScannerOutput: Sendable {
    case sightings([Sighting])
    case adapter(AdapterState, at: Timestamp)
}
