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
        read(
            node, "calibration",
            [
                .init("advertise") { r, n, p, c in
                    guard let v = r.reader.bool(n, p) else { return }
                    c.advertise = v
                    for (a, b) in AutoCalibration.collisions(receivers.map(\.id)) where v {
                        r.reader.fail(
                            n, p,
                            "receivers \"\(a)\" and \"\(b)\" would advertise as the same major and minor "
                                + "(their ids hash alike); rename one")
                    }
                },
                .init("uuid") { r, n, p, c in if let v = r.reader.uuid(n, p) { c.uuid = v } },
                .int("tx_power", -127...20, \.txPower), .number("tag_offset_db", -40...40, \.tagOffset),
            ], into: &c)
    }
}
