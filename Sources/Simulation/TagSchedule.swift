import BeaconConfig
import BeaconCore

/// When a tag of `simulation.tags` sends and what: its own interval (each advertising event
/// delayed by 0–10 ms at random, as the Bluetooth specification's `advDelay` does), its
/// battery at that moment, and which packets are telemetry. It draws from a random stream of
/// its own, so adding such a tag to a site leaves every other tag's trace as it was.
struct TagSchedule: Sendable {
    let tag: SimulatedTag
    let interval: TimeSpan
    let start: Timestamp
    /// The tag's own draws: its walk, its shadowing, its packets' fate.
    var random: SeededRandom
    var nextSend: Timestamp
    /// Advertising events so far (Eddystone-TLM's advertisement count, Ruuvi's sequence).
    var events = 0
    /// Ruuvi's movement counter: one more for each event sent while the tag walks.
    var movements = 0

    init(tag: SimulatedTag, defaultInterval: TimeSpan, start: Timestamp, seed: UInt64) {
        self.tag = tag
        interval = tag.interval ?? defaultInterval
        self.start = start
        random = SeededRandom(seed: seed)
        // A random phase within the first interval.
        nextSend = start + TimeSpan(nanoseconds: Int64(random.uniform() * Double(interval.nanoseconds)))
    }

    /// Whether the tag is still switched on at `t`.
    func isOn(at t: Timestamp) -> Bool { tag.offAfter.map { t < start + $0 } ?? true }

    /// The battery (mV) at `t`: drained linearly from the start, never below 0.
    func batteryMillivolts(at t: Timestamp) -> Int {
        let hours = (t - start).seconds / 3600
        return max(0, tag.batteryMillivolts - Int((tag.drainPerHour * hours).rounded()))
    }

    /// The advertising events due up to `now`, each at its own time; the schedule moves on.
    /// `random`: the tag's own stream (swapped out of `self` while the tag is simulated).
    mutating func due(until now: Timestamp, random: inout SeededRandom) -> [Timestamp] {
        var times: [Timestamp] = []
        while nextSend <= now {
            times.append(nextSend)
            nextSend = nextSend + interval + TimeSpan(nanoseconds: Int64(random.uniform() * 10_000_000))
        }
        return times
    }

    /// Whether event number `n` carries telemetry instead of the identity frame: every tenth,
    /// or every one for a RuuviTag known by its address (it sends nothing but data format 5).
    func sendsTelemetry(event n: Int, tagIsAddress: Bool) -> Bool {
        switch tag.telemetry {
        case .none: return false
        case .tlm: return n % 10 == 9
        case .ruuvi: return tagIsAddress || n % 10 == 9
        }
    }

    /// The telemetry frame of event `n` at `t`, `moving` or not.
    func telemetry(event n: Int, at t: Timestamp, address: String) -> (ManufacturerDatum?, ServiceDatum?) {
        let battery = batteryMillivolts(at: t)
        switch tag.telemetry {
        case .none: return (nil, nil)
        case .tlm:
            return (
                nil, ServiceDatum(uuid: Self.eddystone, payload: Self.tlm(battery: battery, events: n, at: t - start))
            )
        case .ruuvi:
            return (
                ManufacturerDatum(
                    company: RuuviDecoder.company,
                    payload: Self.ruuvi(battery: battery, movements: movements, sequence: n, address: address)), nil
            )
        }
    }

    static let eddystone = "0000feaa-0000-1000-8000-00805f9b34fb"

    /// Eddystone-TLM, unencrypted (version 0): battery, 21.5 °C, the count and the uptime.
    static func tlm(battery: Int, events: Int, at uptime: TimeSpan) -> [UInt8] {
        let temperature = UInt16(21.5 * 256)
        let deciseconds = UInt32(clamping: uptime.nanoseconds / 100_000_000)
        return [0x20, 0x00] + be(UInt16(clamping: battery)) + be(temperature) + be(UInt32(clamping: events))
            + be(deciseconds)
    }

    /// Ruuvi data format 5: 21.5 °C, 45 % humidity, 1013.25 hPa, lying flat (1 g on z), the
    /// battery, +4 dBm, the movement counter and the sequence, and the tag's own address.
    static func ruuvi(battery: Int, movements: Int, sequence: Int, address: String) -> [UInt8] {
        let power = UInt16(max(0, min(2046, battery - 1600))) << 5 | UInt16((4 + 40) / 2)
        let mac = address.split(separator: ":").compactMap { UInt8($0, radix: 16) }
        return [5] + be(UInt16(21.5 / 0.005)) + be(UInt16(45 / 0.0025)) + be(UInt16(101_325 - 50_000))
            + be(UInt16(0)) + be(UInt16(0)) + be(UInt16(1000)) + be(power) + [UInt8(movements & 0xFF)]
            + be(UInt16(sequence & 0xFFFF)) + (mac.count == 6 ? mac : [UInt8](repeating: 0xFF, count: 6))
    }

    private static func be(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
    private static func be(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    }
}
