import APIModel
import BeaconConfig
import BeaconCore
import Logging

/// What `POST /v1/sightings` tells a relay about its records' times, and logs for the
/// gateway's operator (once per relay and kind every ten minutes): records stamped ahead of
/// this gateway's clock are taken at its time (`BeaconEngine.ingest(_:notAfter:)`), and
/// records older than `exit_timeout` are dropped as history (`BeaconEngine.ingest`). Either
/// way the relay's clock, or its buffering, wants fixing, and neither shows anywhere else.
extension APIRouter {
    func relayClockReport(_ sightings: [Sighting]) -> [(String, JSONValue)] {
        guard let latest = sightings.max(by: { $0.time < $1.time }) else { return [] }
        let now = context.clock()
        var report: [(String, JSONValue)] = []
        if latest.time - now > BeaconEngine.clockAheadTolerance {
            let ahead = (latest.time - now).seconds
            report.append(("clock_ahead_s", .round(ahead, places: 10)))
            warnOnce(
                latest.receiver, "ahead", at: now,
                "sightings.clock_ahead",
                [
                    "receiver": "\(latest.receiver)", "ahead_s": "\(Int(ahead.rounded()))",
                    "next": "taken at this gateway's time; set the relay's clock (NTP)",
                ])
        }
        let horizon = context.config.monitoring.exitTimeout
        let stale = sightings.filter { now - $0.time > horizon }
        if let oldest = stale.min(by: { $0.time < $1.time }) {
            report.append(("stale", .int(stale.count)))
            warnOnce(
                oldest.receiver, "stale", at: now,
                "sightings.stale",
                [
                    "receiver": "\(oldest.receiver)", "records": "\(stale.count)",
                    "behind_s": "\(Int((now - oldest.time).seconds.rounded()))",
                    "next": """
                    dropped: older than exit_timeout, they are history, not presence; a backlog, or the \
                    relay's clock is behind (NTP)
                    """,
                ])
        }
        return report
    }

    private func warnOnce(
        _ receiver: String, _ kind: String, at now: Timestamp, _ event: Logger.Message, _ metadata: Logger.Metadata
    ) {
        if context.relayWarnings.due("\(receiver) \(kind)", at: now) {
            context.logger.warning(event, metadata: metadata)
        }
    }
}
