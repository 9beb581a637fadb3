import BeaconCore

/// `calibration:` (extension): the gateways advertise as beacons so that the receivers can
/// be calibrated against each other with no one walking (`AutoCalibration`,
/// `beaconctl calibrate --auto`, docs/positioning.md).
public struct CalibrationSettings: Sendable, Equatable {
    /// Each of this gateway's receivers advertises as the calibration iBeacon of its id.
    public var advertise = false
    /// The calibration iBeacons' UUID; a site beside another may give its own.
    public var uuid = AutoCalibration.defaultUUID
    /// The transmit power asked of each adapter for its advertisement (BlueZ `TxPower`,
    /// dBm); a controller that cannot set it uses its own.
    public var txPower = 0
    /// How much weaker (dB) the tags are heard at 1 m than the gateways' advertisements: the
    /// fitted `rssi_at_1m` is lowered by it, since the receivers are fitted on the gateways'
    /// signal. 0 when tags and gateways' radios send alike.
    public var tagOffset = 0.0

    public init() {}
}

extension SectionReader {
    func readCalibration(_ node: Node, _ c: inout CalibrationSettings, receivers: [ReceiverSpec]) {
        guard
            let f = reader.mapping(node, "calibration", allowed: ["advertise", "uuid", "tx_power", "tag_offset_db"])
        else { return }
        with(f, "advertise") { n, p in
            guard let v = reader.bool(n, p) else { return }
            c.advertise = v
            for (a, b) in AutoCalibration.collisions(receivers.map(\.id)) where v {
                reader.fail(
                    n, p,
                    "receivers \"\(a)\" and \"\(b)\" would advertise as the same major and minor "
                        + "(their ids hash alike); rename one")
            }
        }
        with(f, "uuid") { n, p in if let v = reader.uuid(n, p) { c.uuid = v } }
        with(f, "tx_power") { n, p in if let v = reader.int(n, p, -127...20) { c.txPower = v } }
        with(f, "tag_offset_db") { n, p in if let v = reader.double(n, p, -40...40) { c.tagOffset = v } }
    }
}
