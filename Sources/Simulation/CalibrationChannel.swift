import BeaconConfig
import BeaconCore

#if canImport(Glibc)
    import Glibc
#endif

/// The receivers' own calibration advertisements (`calibration.advertise`) as the simulated
/// site hears them: each receiver sends its iBeacon once a step, and every other receiver on
/// its level hears it through the same channel as the tags, with one difference that decides
/// what auto calibration can know. The receivers do not move, so the shadowing between two
/// of them is drawn once per pair and stays (a shelf between two gateways stays there); only
/// fast fading and packet loss change from packet to packet.
///
/// Its own random stream, so that switching it on leaves the tags' draws, and every figure
/// measured on them, as they were.
struct CalibrationChannel: Sendable {
    let uuid: BeaconUUID
    let identities: [(major: UInt16, minor: UInt16)]
    /// Symmetric: the path between two fixed antennas is the same both ways.
    let shadowing: [[Double]]
    var random: SeededRandom

    init(receivers: [SiteReceiver], uuid: BeaconUUID, sigmaDB: Double, seed: UInt64) {
        self.uuid = uuid
        identities = receivers.map { AutoCalibration.identity(of: $0.id) }
        var random = SeededRandom(seed: seed ^ 0xCA1B_0000_0000_0001)
        var table = Array(repeating: Array(repeating: 0.0, count: receivers.count), count: receivers.count)
        for a in receivers.indices {
            for b in receivers.indices where b > a {
                table[a][b] = random.gaussian() * sigmaDB
                table[b][a] = table[a][b]
            }
        }
        shadowing = table
        self.random = random
    }

    /// What every receiver hears of every other's advertisement sent at `t`.
    mutating func advance(at t: Timestamp, simulator s: SiteSimulator) -> [Sighting] {
        var heard: [Sighting] = []
        let settings = s.settings
        for a in s.receivers.indices {
            for h in s.receivers.indices where h != a && s.receivers[h].level == s.receivers[a].level {
                if random.uniform() < settings.packetLoss { continue }
                let p = s.receivers[a], q = s.receivers[h]
                let dz = (p.z != nil && q.z != nil) ? p.z! - q.z! : 0
                let flat = distance(p.position, q.position)
                let d = max(0.1, (flat * flat + dz * dz).squareRoot())
                var rssi = settings.rssiAt1m + s.receiverGains[a] + s.receiverGains[h]
                rssi -= 10 * settings.pathLossExponent * log10(d) + shadowing[a][h]
                for wall in settings.walls where Polygon.segmentsMeet(p.position, q.position, wall.from, wall.to) {
                    rssi -= wall.lossDB
                }
                if settings.fastFading {
                    rssi += 10 * log10(max(-log(max(random.uniform(), 1e-12)), 1e-4)) + 2.507
                }
                if settings.noiseDB > 0 { rssi += settings.noiseDB * random.gaussian() }
                let value = Int(rssi.rounded())
                guard value >= -100 else { continue }
                heard.append(
                    Sighting(
                        time: t, receiver: q.id, address: Self.address(a), rssi: value,
                        manufacturerData: [ManufacturerDatum(company: 0x004C, payload: payload(a, settings))]))
            }
        }
        return heard
    }

    func payload(_ a: Int, _ settings: SimulationSettings) -> [UInt8] {
        IBeaconID(uuid: uuid, major: identities[a].major, minor: identities[a].minor)
            .payload(measuredPower: Int(settings.rssiAt1m.rounded()))
    }

    static func address(_ a: Int) -> String {
        let hex = Array("0123456789ABCDEF")
        return "C0:CA:00:00:\(hex[(a >> 12) & 15])\(hex[(a >> 8) & 15]):\(hex[(a >> 4) & 15])\(hex[a & 15])"
    }
}
