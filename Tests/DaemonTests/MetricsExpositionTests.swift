import Foundation
import TestSupport
import Testing

/// `/metrics` as Prometheus' own tool reads it, and the families an operator alerts on: a
/// receiver gone silent, the build, and reloads.
@Suite(.serialized) struct MetricsExpositionTests {
    static func value(_ metrics: String, _ sample: String) -> Double? {
        metrics.split(separator: "\n").first { $0.hasPrefix(sample + " ") }.flatMap {
            Double($0.split(separator: " ").last!)
        }
    }

    @Test func promtoolAcceptsTheMetricsAndSilentReceiversShowTheirAge() throws {
        let d = try APIDaemon(
            extra: """
                receivers:
                  - {id: r1, position: {x: 0, y: 0}}
                  - {id: r2, position: {x: 8, y: 0}}
                webhooks:
                  - {id: crm, url: "http://127.0.0.1:9/hook"}

                """)
        try d.start()
        try d.post(
            (0..<3).map { _ in APIDaemon.sighting(major: 1, receiver: "r1") } + [
                APIDaemon.sighting(major: 2, receiver: "relay-9")
            ])
        _ = try d.waitForSightings(4)
        kill(d.daemon!.process.processIdentifier, SIGHUP)
        try d.daemon!.waitUntil("the reload") { _, logs in logs.contains { $0.contains("event=config.reloaded") } }
        try "monitoring: {exit_timeout: soon}\n".write(toFile: d.configPath, atomically: true, encoding: .utf8)
        kill(d.daemon!.process.processIdentifier, SIGHUP)
        try d.daemon!.waitUntil("the refusal") { _, logs in logs.contains { $0.contains("event=config.reload_refused") }
        }

        let metrics = try d.client.request("GET", "/metrics").body
        let file = d.dir.appendingPathComponent("metrics.txt")
        try metrics.write(to: file, atomically: true, encoding: .utf8)
        let check = try runCommand(URL(fileURLWithPath: "/bin/sh"), ["-c", "promtool check metrics < \(file.path)"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")

        #expect(Self.value(metrics, #"beacond_receiver_sightings_total{receiver="r1"}"#) == 3)
        #expect(
            Self.value(metrics, #"beacond_receiver_sightings_total{receiver="r2"}"#) == 0, "a silent receiver is listed"
        )
        #expect(Self.value(metrics, #"beacond_receiver_sightings_total{receiver="relay-9"}"#) == 1)
        let uptime = Self.value(metrics, "beacond_uptime_seconds") ?? 0
        let r1Age = Self.value(metrics, #"beacond_receiver_last_heard_age_seconds{receiver="r1"}"#) ?? -1
        let r2Age = Self.value(metrics, #"beacond_receiver_last_heard_age_seconds{receiver="r2"}"#) ?? -1
        #expect(r1Age >= 0 && r1Age < r2Age, "heard after the start: \(r1Age) s ago, the start \(r2Age) s ago")
        #expect(abs(r2Age - uptime) < 1, "never heard: its age is the daemon's")
        #expect(Self.value(metrics, #"beacond_build_info{arch="x86_64",version="0.1.0"}"#) == 1)
        #expect(Self.value(metrics, #"beacond_config_reloads_total{result="applied"}"#) == 1)
        #expect(Self.value(metrics, #"beacond_config_reloads_total{result="refused"}"#) == 1)
        // Issue 53: what the daemon wrote to its disk, as the kernel counts it for the process:
        // no more than the kernel says after the scrape, and the status says as much.
        let pid = d.daemon!.process.processIdentifier
        let io = { () throws -> Double in
            let text = try runCommand(URL(fileURLWithPath: "/bin/cat"), ["/proc/\(pid)/io"]).stdout
            let line = text.split(separator: "\n").first { $0.hasPrefix("write_bytes: ") } ?? ""
            return Double(line.dropFirst("write_bytes: ".count)) ?? -1
        }
        let written = try #require(Self.value(metrics, "beacond_state_written_bytes_total"))
        let afterScrape = try io()
        #expect(written >= 0 && written <= afterScrape, "\(written) vs \(afterScrape)")
        let status = try d.client.request("GET", "/v1/status").object
        let said = Double(try #require(status["state_written_bytes"] as? Int))
        let afterStatus = try io()
        #expect(said >= written && said <= afterStatus, "\(said) vs \(written)…\(afterStatus)")
        let shown = try runCommand(Executables.built("beaconctl"), ["--socket", d.socketPath, "status"])
        #expect(shown.stdout.contains("written since the start"), "\(shown.stdout)")
        #expect(d.stop() == 0)
    }
}
