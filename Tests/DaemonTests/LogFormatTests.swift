import Foundation
import TestSupport
import Testing

/// Issue 26: standard error is logfmt, made from swift-log metadata: every line a run writes
/// parses with a strict logfmt reader, and a value keeps its spaces.
@Suite struct LogFormatTests {
    @Test func everyLineOfASimulatedRunParsesAsLogfmt() throws {
        let d = try APIDaemon(extra: BeaconctlTests.simulatedSite)
        try d.start(arguments: ["--simulate", "--no-print-events", "--log-level", "debug"])
        try d.waitForStatus("sightings from the simulator") {
            ($0["counts"] as? [String: Any])?["sightings"] as? Int ?? 0 > 0
        }
        #expect(d.stop() == 0)
        let lines = d.daemon!.logs
        #expect(lines.count >= 5, "\(lines)")
        for line in lines {
            let fields = try LogfmtReader.fields(line)
            #expect(fields["level"] != nil && fields["event"] != nil, "\(line)")
        }
        let started = lines.logEvents("simulation.started").first
        #expect(started?["next"] == "no BlueZ; sightings come from the site simulator", "\(lines)")
        #expect(lines.hasLog("beacond.stopped", level: "info"))
    }
}
