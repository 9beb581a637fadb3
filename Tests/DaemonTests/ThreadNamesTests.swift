import Foundation
import TestSupport
import Testing

/// Each service's thread carries its name, so `top -H` on a gateway says which part of the
/// daemon uses the CPU (and a benchmark can read one thread's time).
@Suite struct ThreadNamesTests {
    @Test func theServicesThreadsAreNamed() throws {
        let d = try APIDaemon(extra: BeaconctlTests.simulatedSite)
        try d.start(arguments: ["--simulate", "--no-print-events"])
        let pid = d.daemon!.process.processIdentifier
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
        let names = Set(
            tasks.compactMap {
                try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/comm", encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            })
        for name in ["beacond-api", "beacond-engine", "beacond-sim", "beacond-verify"] {
            #expect(names.contains(name), "\(names.sorted())")
        }
        #expect(d.stop() == 0)
    }
}
