import BeaconCore

/// `simulation:` (an extension section): how `beacond simulate` and `beacond --simulate`
/// model a site. Receivers, assets and zones come from the rest of the same file.
public struct SimulationSettings: Sendable, Equatable {
    /// The floor the tags move on: x in 0...width, y in 0...depth (metres).
    public var width = 30.0
    public var depth = 20.0
    /// Log-normal shadowing (dB, 1 σ), correlated over `shadowingDistance` metres of movement
    /// and `shadowingTime` of time (people, carts and doors moving around a standing tag).
    public var sigmaDB = 4.0
    public var shadowingDistance = 1.5
    public var shadowingTime = TimeSpan.seconds(2)
    /// Independent measurement noise per packet (dB, 1 σ).
    public var noiseDB = 0.0
    /// Rayleigh fast fading per packet, scaled to a median of 0 dB (a receiver calibrated in
    /// place measures its `rssi_at_1m` with the fading in it).
    public var fastFading = true
    /// Probability that a packet is not received by a given receiver.
    public var packetLoss = 0.2
    /// Probability that a packet arrives over a reflected path, weaker by 3–12 dB.
    public var multipath = 0.0
    /// Attenuation by the carrier's body for a receiver directly behind them (dB).
    public var bodyLossDB = 3.0
    public var advertisingHz = 5.0
    /// RSSI at 1 m and path-loss exponent of the radio channel.
    public var rssiAt1m = -59.0
    public var pathLossExponent = 2.0
    /// Walking speed range (m/s) and how long tags stand still between walks.
    public var walkingSpeed = 0.8...1.4
    public var pause = TimeSpan.seconds(5)...TimeSpan.seconds(60)
    /// Share of destinations chosen inside a zone (the rest anywhere on the floor).
    public var zoneVisits = 0.5
    /// Spread (dB, 1 σ) of the receivers' antenna gains, each drawn once: what tells one
    /// receiver's `rssi_at_1m` from the next one's. 0: every receiver alike.
    public var receiverGainDB = 0.0
    /// Walls: segments with the loss (dB) a signal takes crossing them.
    public var walls: [Wall] = []
    /// Tags with a pace, telemetry or battery of their own (`simulation.tags`); the rest send
    /// one identity frame every `1 / advertising_hz`.
    public var tags: [SimulatedTag] = []

    public struct Wall: Sendable, Equatable {
        public var from: Point
        public var to: Point
        public var lossDB: Double
        public init(from: Point, to: Point, lossDB: Double) {
            self.from = from
            self.to = to
            self.lossDB = lossDB
        }
    }

    public init() {}
}

/// One simulated tag as a store's real tags differ from each other: its own advertising
/// interval (a 10 s tag beside 100 ms ones), the telemetry frames it sends between its
/// identity frames, a battery that drains, and a time at which it is switched off — what the
/// daemon's tag rules (pace, `asset.battery_low`, `asset.missing`) are there for.
public struct SimulatedTag: Sendable, Equatable {
    public enum Telemetry: String, CaseIterable, Sendable {
        case none
        /// Eddystone-TLM every tenth frame, from the tag's address.
        case tlm
        /// Ruuvi data format 5: every frame of an address tag (a RuuviTag sends nothing
        /// else), every tenth of an iBeacon or Eddystone one.
        case ruuvi
    }

    public var asset: String
    /// nil: `1 / advertising_hz`.
    public var interval: TimeSpan?
    public var telemetry = Telemetry.none
    /// The battery at the start (mV) and how fast it falls (mV per hour).
    public var batteryMillivolts = 3000
    public var drainPerHour = 0.0
    /// Switched off this long after the start: it sends nothing more.
    public var offAfter: TimeSpan?
    /// Put down here for the whole run (`stands_at: [x, y]`): a pallet parked by a zone's edge.
    public var standsAt: Point?
    /// With `stands_at`: picked up this long after the start and carried on from there, as
    /// the other tags walk (`picked_up_after`) — how soon a still tag is followed again.
    public var pickedUpAfter: TimeSpan?

    public init(asset: String) { self.asset = asset }
}
