import APIModel
import BeaconConfig
import BeaconCore
import HTTPServer

/// `/v1/calibration`: what the receivers hear of each other's calibration advertisements
/// (`calibration.advertise`) and each receiver's fit to it, for `beaconctl calibrate --auto`.
/// Every gateway of a site takes every receiver's sightings, so each one answers for the
/// whole site.
extension APIRouter {
    func calibration() -> HTTPReply {
        let config = context.config
        let previous = config.engineConfiguration.receivers
        let offset = config.calibration.tagOffset
        // Copied off the engine's thread, and fitted here: the fit costs the cube of the
        // receivers, which the engine's turn should not pay.
        let answer = onEngine { engine, now in (engine.calibration.map { ($0, now) }, []) }
        guard let answer else { return engineUnavailable() }
        guard let (calibration, now) = answer else {
            return Reply.error(
                409, "no_calibration",
                "calibration needs at least two receivers in receivers: (each hears the others' advertisements)")
        }
        let pairs = calibration.pairs
        let fits = calibration.fit(previous: previous, tagOffset: offset)
        let advertising = context.runtime().advertising
        return Reply.json(
            .object([
                ("uuid", .string(calibration.uuid.description)),
                ("since", .string(RFC3339.format(calibration.since))),
                ("advertise", .bool(config.calibration.advertise)),
                ("advertising", .array(advertising.map(JSONValue.string))),
                ("tag_offset_db", .number(offset)),
                ("minimum_samples", .int(AutoCalibration.minimumSamples)),
                ("unknown_advertisers", .int(calibration.unknownAdvertisers)),
                (
                    "receivers",
                    .array(
                        calibration.receivers.map { r in
                            let id = AutoCalibration.identity(of: r.id)
                            return .object([
                                ("id", .string(r.id)), ("major", .int(Int(id.major))), ("minor", .int(Int(id.minor))),
                            ])
                        })
                ),
                (
                    "pairs",
                    .array(
                        pairs.map { p in
                            .object([
                                ("hearer", .string(p.hearer)), ("advertiser", .string(p.advertiser)),
                                ("distance_m", .round(p.distance, places: 1000)), ("samples", .int(p.samples)),
                                ("mean_rssi", .round(p.meanRSSI, places: 10)),
                                ("sd_db", .round(p.standardDeviation, places: 10)),
                                ("age_s", .round((now - p.lastHeard).seconds, places: 10)),
                            ])
                        })
                ),
                ("fits", .array(fits.map(\.json))),
            ]))
    }

    /// `DELETE /v1/calibration`: forget what was heard (a receiver remounted, a fresh fit).
    func resetCalibration() -> HTTPReply {
        let done = onEngine { engine, _ in (engine.resetCalibration(), []) }
        guard let done else { return engineUnavailable() }
        guard done else {
            return Reply.error(409, "no_calibration", "calibration needs at least two receivers in receivers:")
        }
        return Reply.json(.object([("reset", .bool(true))]))
    }
}
